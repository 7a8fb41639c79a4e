"use client";
// The Forge pipeline view (req F1–F10): a rail of the seven stages with each one's state
// and iteration; a prominent notice when the pipeline stopped for a person; the artifact
// viewer with a diff between drafts; and at a gate the edit box, feedback and pass (after
// a failed agent: retry, guidance, abort). It reads `forge.status` again whenever the live
// session records a fact (`version`: the last event that is not streamed output), so it
// follows the pipeline as it runs without a read per streamed chunk.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { Panel } from "@/components/panel";
import { LineDiffView } from "@/components/line-diff-view";
import { trpcErrorCode, useTRPC } from "@/lib/trpc/client";
import { versionCredit } from "@/lib/credit";
import { formatCost, formatTokens } from "@/lib/usage";
import type { ForgeAction, ForgeStatus as ForgeStatusData } from "@/server/tasks/forge";
import { BUTTON_STYLES, NoticeBar, type Notice } from "./session-actions";

/** forge.status's result: the pipeline, its usage, and the names of the people it credits. */
type ForgeStatus = ForgeStatusData & { names: Record<string, string> };

const STAGE_TONE: Record<ForgeStatus["stages"][number]["state"], string> = {
  pending: "border-zinc-200 bg-white text-zinc-600 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-400",
  active: "border-sky-300 bg-sky-50 text-sky-900 dark:border-sky-800 dark:bg-sky-950/40 dark:text-sky-200",
  waiting: "border-amber-400 bg-amber-50 text-amber-900 dark:border-amber-700 dark:bg-amber-950/40 dark:text-amber-200",
  stopped: "border-rose-400 bg-rose-50 text-rose-900 dark:border-rose-800 dark:bg-rose-950/40 dark:text-rose-200",
  completed: "border-emerald-300 bg-emerald-50 text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950/40 dark:text-emerald-200",
};
const STAGE_WORD: Record<ForgeStatus["stages"][number]["state"], string> = {
  pending: "pending",
  active: "running",
  waiting: "waits for you",
  stopped: "stopped",
  completed: "done",
};

export function ForgePanel({ sessionId, version, canOperate }: { sessionId: string; version: number; canOperate: boolean }) {
  const trpc = useTRPC();
  const status = useQuery(trpc.forge.status.queryOptions({ sessionId }));
  const { refetch } = status;
  // The live session moved: read the pipeline again.
  useEffect(() => {
    void refetch();
  }, [version, refetch]);
  if (status.error) return <NoticeBar notice={{ tone: "error", text: `Forge status: ${status.error.message}` }} onClose={() => {}} />;
  if (!status.data) return null;
  return <ForgeView status={status.data} canOperate={canOperate} onChanged={() => void refetch()} />;
}

function ForgeView({ status, canOperate, onChanged }: { status: ForgeStatus; canOperate: boolean; onChanged: () => void }) {
  const { waiting } = status;
  const [selected, setSelected] = useState<string | null>(null);
  // Show the waiting stage's main artifact, else the newest one.
  const focus = useMemo(() => {
    const ofStage = waiting?.stage ? status.artifacts.filter((a) => a.stage === waiting.stage) : [];
    return (ofStage[0] ?? status.artifacts.at(-1))?.path ?? null;
  }, [status.artifacts, waiting?.stage]);
  const path = selected && status.artifacts.some((a) => a.path === selected) ? selected : focus;
  const artifact = status.artifacts.find((a) => a.path === path) ?? null;
  // The page opens at the pipeline when its stage row and gate would not fit under the
  // session's header (a phone): once, and only if the reader has not scrolled yet.
  const opened = useRef<HTMLElement>(null);
  useEffect(() => {
    const section = opened.current;
    const gate = section?.querySelector("[data-testid=gate-actions]");
    if (section && gate && window.scrollY === 0 && gate.getBoundingClientRect().bottom > window.innerHeight) {
      section.scrollIntoView({ block: "start" });
    }
  }, []);
  return (
    <section ref={opened} data-testid="forge" aria-label="Forge pipeline" className="scroll-mt-16 space-y-3">
      <p className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-zinc-700 dark:text-zinc-300">
        <span>
          Forge status: <b data-testid="forge-status">{status.status}</b>
          {status.outcome && status.outcome !== "completed" ? ` (${status.outcome})` : ""}
        </span>
        <span data-testid="forge-usage">
          {status.usage.calls} agent call{status.usage.calls === 1 ? "" : "s"}, {formatTokens(status.usage.inputTokens)} in
          {status.usage.cachedInputTokens ? ` (${formatTokens(status.usage.cachedInputTokens)} cached)` : ""} /{" "}
          {formatTokens(status.usage.outputTokens)} out tokens, {formatCost(status.usage.cost, status.usage.currency)}
          {status.usage.unpriced.length ? " + unpriced" : ""}
        </span>
        {status.budget?.maxCalls || status.budget?.maxTokens ? (
          <span>
            Budget: {status.budgetUsed.calls}
            {status.budget.maxCalls ? ` of ${status.budget.maxCalls}` : ""} calls
            {status.budget.maxTokens ? `, ${status.budgetUsed.tokens} of ${status.budget.maxTokens} tokens` : ""}
          </span>
        ) : null}
        {status.parent ? (
          <span>
            {status.parent.changeType} of{" "}
            <a className="underline" href={`/sessions/${status.parent.sessionId}`}>
              {status.parent.sessionId}
            </a>
          </span>
        ) : null}
      </p>
      <StageRail status={status} />
      {status.needed ? <StopNotice needed={status.needed} /> : null}
      {canOperate && waiting ? <GateActions status={status} onChanged={onChanged} /> : null}
      {status.warnings.length && status.status === "InProgress" ? (
        <p
          data-testid="forge-warning"
          className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-xs text-amber-950 dark:border-amber-800 dark:bg-amber-950/40 dark:text-amber-100"
        >
          ⚠ {status.warnings.at(-1)!.message}
        </p>
      ) : null}
      <div className="grid grid-cols-1 gap-3 lg:grid-cols-[220px_minmax(0,1fr)]">
        <Panel title="Artifacts" meta={<span className="font-mono text-xs">{status.artifacts.length}</span>}>
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {status.artifacts.map((a) => (
              <li key={a.path}>
                <button
                  type="button"
                  data-testid={`artifact-${a.path}`}
                  aria-current={a.path === path ? "true" : undefined}
                  onClick={() => setSelected(a.path)}
                  className={`w-full px-4 py-2 text-left text-xs hover:bg-zinc-50 dark:hover:bg-zinc-800/60 ${a.path === path ? "bg-zinc-100 font-medium dark:bg-zinc-800" : ""}`}
                >
                  <span className="block truncate font-mono">{a.path.replace(/^\.forge\//, "")}</span>
                  <span className="text-xs text-zinc-600 dark:text-zinc-400">
                    {a.stage} · <span data-testid="artifact-number">v{a.number}</span>
                    {a.versions[a.number - 1] ? ` · ${versionCredit(a.versions[a.number - 1]!, status.names)}` : ""}
                    {a.immutable ? " · frozen" : ""}
                    {a.problems.length ? ` · ${a.problems.length} problem(s)` : ""}
                    {a.held ? " · agent's version held" : ""}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        </Panel>
        {artifact ? (
          <ArtifactViewer
            key={`${artifact.path}:${artifact.hash}`}
            status={status}
            artifact={artifact}
            canOperate={canOperate}
            onChanged={onChanged}
          />
        ) : (
          <Panel title="Artifact">
            <p className="px-4 py-3 text-xs text-zinc-600 dark:text-zinc-400">No artifact yet: the first stage is drafting.</p>
          </Panel>
        )}
      </div>
      <CritiqueList status={status} />
    </section>
  );
}

function StageRail({ status }: { status: ForgeStatus }) {
  return (
    <ol data-testid="stage-rail" aria-label="Stages" className="grid grid-cols-2 gap-2 sm:grid-cols-4 lg:grid-cols-7">
      {status.stages.map((s, i) => (
        <li
          key={s.name}
          data-testid={`stage-${s.name}`}
          data-state={s.state}
          aria-current={s.state === "active" || s.state === "waiting" || s.state === "stopped" ? "step" : undefined}
          className={`rounded-md border px-2.5 py-2 text-xs ${STAGE_TONE[s.state]}`}
        >
          <span className="block font-medium">
            {i + 1}. {s.title}
          </span>
          <span className="block text-xs">
            {STAGE_WORD[s.state]}
            {s.iteration > 1 ? ` · iteration ${s.iteration}/${s.cap}` : ""}
            {s.runs > 1 ? <span data-testid={`stage-runs-${s.name}`}>{` · ran ${s.runs} times`}</span> : null}
            {s.gate ? " · gate" : ""}
          </span>
          {s.usage.calls ? (
            <span className="block text-xs opacity-80">
              {s.usage.calls} call{s.usage.calls === 1 ? "" : "s"}
              {s.usage.inputTokens + s.usage.outputTokens ? ` · ${s.usage.inputTokens + s.usage.outputTokens} tokens` : ""}
              {s.usage.cachedInputTokens ? (
                <span data-testid={`stage-cached-${s.name}`}>{` · ${formatTokens(s.usage.cachedInputTokens)} cached in`}</span>
              ) : null}
            </span>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

function StopNotice({ needed }: { needed: NonNullable<ForgeStatus["needed"]> }) {
  const title = {
    loop: "The critic's loop does not end",
    cap: "The iteration cap was reached",
    agent_failed: "An agent failed beyond its retries",
  }[needed.cause];
  return (
    <div
      role="alert"
      data-testid="forge-stop"
      className="rounded-md border-2 border-rose-500 bg-rose-50 px-4 py-3 text-sm text-rose-950 dark:border-rose-600 dark:bg-rose-950/50 dark:text-rose-50"
    >
      <p className="font-semibold">
        🚨 {title}
        {needed.stage ? ` (${needed.stage})` : ""}: a person decides.
      </p>
      <p className="mt-1 text-xs">
        {needed.message}
        {needed.errorClass ? ` [${needed.errorClass}]` : ""}
      </p>
    </div>
  );
}

function ArtifactViewer({
  status,
  artifact,
  canOperate,
  onChanged,
}: {
  status: ForgeStatus;
  artifact: ForgeStatus["artifacts"][number];
  canOperate: boolean;
  onChanged: () => void;
}) {
  const trpc = useTRPC();
  const versions = artifact.versions;
  const [shown, setShown] = useState(artifact.hash);
  const [mode, setMode] = useState<"text" | "diff" | "edit">("text");
  const index = versions.findLastIndex((v) => v.hash === shown);
  const previous = index > 0 ? versions[index - 1] : null;
  const current = useQuery(trpc.forge.artifact.queryOptions({ sessionId: status.sessionId, hash: shown }));
  const before = useQuery({
    ...trpc.forge.artifact.queryOptions({ sessionId: status.sessionId, hash: previous?.hash ?? artifact.hash }),
    enabled: mode === "diff" && !!previous,
  });
  const held = useQuery({
    ...trpc.forge.artifact.queryOptions({ sessionId: status.sessionId, hash: artifact.held?.hash ?? artifact.hash }),
    enabled: !!artifact.held,
  });
  const editable = canOperate && status.waiting?.stage === artifact.stage && !artifact.immutable && shown === artifact.hash;
  const [draft, setDraft] = useState<string | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const edit = useMutation(
    trpc.forge.edit.mutationOptions({
      onSuccess: () => {
        setNotice({ tone: "info", text: "Saved: your text is kept through every later draft." });
        setMode("text");
        setDraft(null);
        onChanged();
      },
      onError: (err) => setNotice({ tone: trpcErrorCode(err) === "CONFLICT" ? "warn" : "error", text: err.message }),
    }),
  );
  const save = (content: string) => edit.mutate({ sessionId: status.sessionId, path: artifact.path, content, baseHash: artifact.hash });
  return (
    <Panel
      title={artifact.path}
      meta={
        <label className="flex items-center gap-1 text-xs">
          <span className="sr-only">Version</span>
          <select
            data-testid="artifact-version"
            value={shown}
            onChange={(e) => setShown(e.target.value)}
            className="rounded border border-zinc-300 bg-white px-1 py-0.5 font-mono dark:border-zinc-700 dark:bg-zinc-900"
          >
            {versions.map((v) => (
              <option key={v.version} value={v.hash}>
                v{v.number} · {versionCredit(v, status.names)} · {v.hash.slice(0, 8)}
              </option>
            ))}
          </select>
        </label>
      }
    >
      <div className="space-y-2 px-4 py-3">
        {notice ? <NoticeBar notice={notice} onClose={() => setNotice(null)} /> : null}
        <div role="tablist" aria-label="View" className="flex gap-1 text-xs">
          {(["text", "diff", ...(editable ? (["edit"] as const) : [])] as const).map((m) => (
            <button
              key={m}
              type="button"
              role="tab"
              aria-selected={mode === m}
              data-testid={`artifact-tab-${m}`}
              disabled={m === "diff" && !previous}
              onClick={() => setMode(m)}
              className={`rounded px-2 py-1 ${mode === m ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "text-zinc-700 hover:bg-zinc-100 disabled:opacity-40 dark:text-zinc-300 dark:hover:bg-zinc-800"}`}
            >
              {m === "text" ? "Text" : m === "diff" ? "Diff with previous draft" : "Edit"}
            </button>
          ))}
        </div>
        {current.data ? (
          <a
            data-testid="artifact-download"
            download={`${status.sessionId}-${artifact.path.replace(/^\.forge\//, "")}`}
            href={`data:${artifact.path.endsWith(".json") ? "application/json" : "text/markdown"};charset=utf-8,${encodeURIComponent(current.data.text)}`}
            className="text-xs text-zinc-700 underline dark:text-zinc-300"
          >
            Download this version
          </a>
        ) : null}
        {artifact.problems.length ? (
          <ul data-testid="artifact-problems" className="list-disc pl-5 text-xs text-rose-800 dark:text-rose-300">
            {artifact.problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        ) : null}
        {mode === "edit" && current.data ? (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              save(draft ?? current.data.text);
            }}
            className="space-y-2"
          >
            <label className="block text-xs font-medium" htmlFor="artifact-editor">
              Your edit (kept byte for byte through the next drafts)
            </label>
            <textarea
              id="artifact-editor"
              data-testid="artifact-editor"
              value={draft ?? current.data.text}
              onChange={(e) => setDraft(e.target.value)}
              rows={14}
              className="w-full rounded-md border border-zinc-300 bg-white p-2 font-mono text-xs dark:border-zinc-700 dark:bg-zinc-950"
            />
            <button type="submit" data-testid="artifact-save" className={BUTTON_STYLES.primary} disabled={edit.isPending || draft === null}>
              Save edit
            </button>
          </form>
        ) : mode === "diff" && previous ? (
          <LineDiffView before={before.data?.text ?? ""} after={current.data?.text ?? ""} />
        ) : (
          <pre
            data-testid="artifact-text"
            tabIndex={0}
            role="region"
            aria-label="Artifact"
            className="max-h-96 overflow-auto rounded bg-zinc-50 p-3 font-mono text-xs whitespace-pre-wrap dark:bg-zinc-950"
          >
            {current.data?.text ?? "…"}
          </pre>
        )}
        {artifact.held && held.data && current.data ? (
          <div data-testid="held-draft" className="space-y-2 rounded-md border border-amber-300 p-3 dark:border-amber-800">
            <p className="text-xs font-medium">
              The agent&apos;s redraft changed your lines in {artifact.held.conflicts} place(s): your text was kept. Its version:
            </p>
            <LineDiffView before={current.data.text} after={held.data.text} />
            {editable ? (
              <button type="button" data-testid="accept-held" className={BUTTON_STYLES.secondary} onClick={() => save(held.data.text)}>
                Use the agent&apos;s version
              </button>
            ) : null}
          </div>
        ) : null}
      </div>
    </Panel>
  );
}

function GateActions({ status, onChanged }: { status: ForgeStatus; onChanged: () => void }) {
  const trpc = useTRPC();
  const waiting = status.waiting!;
  const [text, setText] = useState("");
  const [notice, setNotice] = useState<Notice | null>(null);
  const options = {
    onSuccess: () => {
      setText("");
      setNotice(null);
      onChanged();
    },
    onError: (err: { message: string }) => setNotice({ tone: "warn", text: err.message }),
  };
  const pass = useMutation(trpc.forge.pass.mutationOptions(options));
  const feedback = useMutation(trpc.forge.feedback.mutationOptions(options));
  const choose = useMutation(trpc.forge.choose.mutationOptions(options));
  const busy = pass.isPending || feedback.isPending || choose.isPending;
  const has = (a: ForgeAction) => waiting.actions.includes(a);
  const { sessionId } = status;
  const title =
    waiting.kind === "agent_failed"
      ? "Your choice"
      : waiting.kind === "stopped"
        ? "The loop stopped: your call"
        : `Review the ${waiting.stage} draft`;
  return (
    <Panel title={title}>
      <div data-testid="gate-actions" className="space-y-2 px-4 py-3">
        {notice ? <NoticeBar notice={notice} onClose={() => setNotice(null)} /> : null}
        {has("feedback") || has("guidance") ? (
          <>
            <label htmlFor="gate-text" className="block text-xs font-medium">
              {has("guidance") ? "Guidance for the agent (recorded as critical feedback)" : "Feedback for the next draft"}
            </label>
            <textarea
              id="gate-text"
              data-testid="gate-text"
              value={text}
              onChange={(e) => setText(e.target.value)}
              rows={3}
              className="w-full rounded-md border border-zinc-300 bg-white p-2 text-xs dark:border-zinc-700 dark:bg-zinc-950"
            />
          </>
        ) : (
          <p className="text-xs text-zinc-700 dark:text-zinc-300">
            This gate takes edits only: edit the draft if you like, then pass it on.
          </p>
        )}
        <div className="flex flex-wrap gap-2">
          {has("pass") ? (
            <button
              type="button"
              data-testid="gate-pass"
              className={BUTTON_STYLES.confirm}
              disabled={busy}
              onClick={() => pass.mutate({ sessionId })}
            >
              Pass
            </button>
          ) : null}
          {has("feedback") ? (
            <button
              type="button"
              data-testid="gate-feedback"
              className={BUTTON_STYLES.primary}
              disabled={busy || !text.trim()}
              onClick={() => feedback.mutate({ sessionId, text })}
            >
              Send feedback
            </button>
          ) : null}
          {has("retry") ? (
            <button
              type="button"
              data-testid="gate-retry"
              className={BUTTON_STYLES.primary}
              disabled={busy}
              onClick={() => choose.mutate({ sessionId, choice: "retry" })}
            >
              Retry
            </button>
          ) : null}
          {has("guidance") ? (
            <button
              type="button"
              data-testid="gate-guidance"
              className={BUTTON_STYLES.secondary}
              disabled={busy || !text.trim()}
              onClick={() => choose.mutate({ sessionId, choice: "guidance", text })}
            >
              Retry with guidance
            </button>
          ) : null}
          {has("abort") ? (
            <button
              type="button"
              data-testid="gate-abort"
              className={BUTTON_STYLES.danger}
              disabled={busy}
              onClick={() => choose.mutate({ sessionId, choice: "abort" })}
            >
              Abort
            </button>
          ) : null}
        </div>
      </div>
    </Panel>
  );
}

function CritiqueList({ status }: { status: ForgeStatus }) {
  if (!status.critiques.length) return null;
  return (
    <Panel title="Critiques" meta={<span className="font-mono text-xs">{status.critiques.length}</span>}>
      <ul className="divide-y divide-zinc-100 dark:divide-zinc-800">
        {status.critiques.map((c, i) => (
          <li key={i} data-testid="critique" className="px-4 py-2 text-xs">
            <p>
              <b>
                {c.stage} · round {c.round} · {c.decision}
              </b>{" "}
              — {c.summary}
            </p>
            {c.findings.length ? (
              <ul className="mt-1 list-disc pl-5 text-zinc-700 dark:text-zinc-300">
                {c.findings.map((f) => (
                  <li key={f.id}>
                    <span className="font-mono">{f.id}</span> [{f.severity}
                    {f.source === "rule" ? ", rule" : ""}] {f.message}
                  </li>
                ))}
              </ul>
            ) : null}
            {c.loop.escalate || c.loop.warning ? (
              <p className="mt-1 text-amber-900 dark:text-amber-200">⚠ {c.loop.escalate ?? c.loop.warning}</p>
            ) : null}
          </li>
        ))}
      </ul>
    </Panel>
  );
}
