"use client";
// The form that starts a task: project, workflow, mode and the prompt. Field errors from
// the server's zod schema show under their field; on success the new session opens. A
// workflow whose roles are not all bound on the project is not ready (req X2): Start is
// disabled with the reason the start itself would give, and a link to the role pickers.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { FIELD_CLASS, LABEL_CLASS } from "@/components/form-classes";
import { Panel } from "@/components/panel";
import { parseContenders } from "@/lib/bake-off";
import { DEMO_PROJECT, simulatedWarning } from "@/lib/simulated";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";

interface WorkflowOption {
  id: string;
  title: string;
  modes: string[];
  /** The project whose own workflow this is; null: a built-in, offered for every project. */
  projectId: string | null;
}

/** A workflow on a project: ready, or the roles no agent plays and why it cannot start. */
interface Readiness {
  projectId: string;
  workflow: string;
  ready: boolean;
  missing: string[];
  reason: string | null;
}

export function NewTaskForm({
  projects,
  workflows,
  readiness = [],
}: {
  projects: Array<{ id: string; name: string; simulated?: boolean }>;
  workflows: WorkflowOption[];
  readiness?: Readiness[];
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const [projectId, setProjectId] = useState(projects[0]?.id ?? "");
  const offered = workflows.filter((w) => w.projectId === null || w.projectId === projectId);
  const [chosen, setWorkflow] = useState(offered[0]?.id ?? "review_loop");
  // A project's own workflow is not offered once another project is picked.
  const workflow = offered.some((w) => w.id === chosen) ? chosen : (offered[0]?.id ?? "review_loop");
  const modes = offered.find((w) => w.id === workflow)?.modes ?? ["proposal"];
  const [mode, setMode] = useState(modes[0] ?? "proposal");
  const [prompt, setPrompt] = useState("");
  // A bake-off (docs/bake-off.md): coders, comma-separated; empty, an ordinary task.
  const [bakeOff, setBakeOff] = useState("");
  const start = useMutation(trpc.tasks.start.mutationOptions({ onSuccess: (r) => router.push(`/sessions/${r.sessionId}`) }));
  const fieldErrors = trpcFieldErrors(start.error);
  const effectiveMode = modes.includes(mode) ? mode : (modes[0] ?? "proposal");
  const notReady = readiness.find((r) => r.projectId === projectId && r.workflow === workflow && !r.ready) ?? null;

  return (
    <Panel title="Task">
      <form
        className="space-y-4 p-4"
        onSubmit={(e) => {
          e.preventDefault();
          if (notReady) return;
          const contenders = parseContenders(bakeOff);
          start.mutate({ projectId, workflow, mode: effectiveMode, prompt, ...(contenders.length ? { bakeOff: { contenders } } : {}) });
        }}
      >
        <div className="grid gap-4 sm:grid-cols-2">
          <div>
            <label className={LABEL_CLASS} htmlFor="project">
              Project
            </label>
            <select id="project" className={FIELD_CLASS} value={projectId} onChange={(e) => setProjectId(e.target.value)}>
              {projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label className={LABEL_CLASS} htmlFor="workflow">
              Workflow
            </label>
            <select id="workflow" className={FIELD_CLASS} value={workflow} onChange={(e) => setWorkflow(e.target.value)}>
              {offered.map((w) => (
                <option key={`${w.projectId ?? ""}:${w.id}`} value={w.id}>
                  {w.id} — {w.title}
                </option>
              ))}
            </select>
          </div>
        </div>
        {notReady ? (
          <div
            id="workflow-not-ready"
            role="alert"
            data-testid="workflow-not-ready"
            className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-900/70 dark:bg-amber-950/40 dark:text-amber-200"
          >
            <p>
              <strong>{workflow}</strong> is not ready on this project: no agent plays {notReady.missing.join(", ")}.
            </p>
            <p className="mt-1 text-xs">{notReady.reason}</p>
            <a className="mt-1 inline-block font-medium underline" href={`/settings/projects/${projectId}#roles`}>
              Bind {notReady.missing.length === 1 ? "it" : "them"} in the project&apos;s roles →
            </a>
          </div>
        ) : (
          <p className="text-xs text-emerald-800 dark:text-emerald-300" data-testid="workflow-ready">
            {workflow} is ready on this project: every role it needs has an agent.
          </p>
        )}
        {projects.find((p) => p.id === projectId)?.simulated ? (
          <p
            data-testid="simulated-note"
            data-workflow={workflow}
            className="rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-xs text-amber-900 dark:border-amber-900/60 dark:bg-amber-950/30 dark:text-amber-200"
          >
            This project&apos;s agents are <strong>simulated</strong>: canned replies from a script, not an AI model, no network.{" "}
            {simulatedWarning(workflow, projectId)} For real work, add a project with real agents (Claude Code, Codex, Gemini CLI or an HTTP
            model): see &quot;Using real agents&quot; in the README.
          </p>
        ) : null}
        <fieldset>
          <legend className={LABEL_CLASS}>Mode</legend>
          <div className="flex gap-2">
            {modes.map((m) => (
              <label
                key={m}
                className={`cursor-pointer rounded-md border px-3 py-1.5 text-sm ${effectiveMode === m ? "border-sky-500 bg-sky-50 text-sky-800 dark:bg-sky-950/40 dark:text-sky-200" : "border-zinc-300 text-zinc-600 dark:border-zinc-700 dark:text-zinc-300"}`}
              >
                <input type="radio" name="mode" value={m} checked={effectiveMode === m} onChange={() => setMode(m)} className="sr-only" />
                {m}
              </label>
            ))}
          </div>
        </fieldset>
        <div>
          <label className={LABEL_CLASS} htmlFor="prompt">
            What should the cats do?
          </label>
          <textarea
            id="prompt"
            className={`${FIELD_CLASS} min-h-40 font-mono`}
            value={prompt}
            onChange={(e) => setPrompt(e.target.value)}
            placeholder={
              workflow === "forge"
                ? "The idea: what to build, and for whom."
                : projectId === DEMO_PROJECT
                  ? "Fix the failing test in test/slugify.test.js without changing the tests."
                  : "What to change, and how you will know it is done."
            }
          />
          {fieldErrors.prompt?.map((m) => (
            <p key={m} className="mt-1 text-xs text-rose-700 dark:text-rose-400">
              {m}
            </p>
          ))}
        </div>
        {effectiveMode === "proposal" ? (
          <div>
            <label className={LABEL_CLASS} htmlFor="bake-off">
              Bake-off (optional)
            </label>
            <input
              id="bake-off"
              className={`${FIELD_CLASS} font-mono`}
              value={bakeOff}
              onChange={(e) => setBakeOff(e.target.value)}
              placeholder="claude-coder, codex-coder, codex-coder:o3"
              aria-describedby="bake-off-help"
            />
            <p id="bake-off-help" className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
              2 to 6 coders of this project, each <code>coder</code> or <code>coder:model</code>: after your confirm, each builds the
              proposal in its own branch through the same review and tests; you pick the winner.
            </p>
            {[...(fieldErrors.bakeOff ?? []), ...(fieldErrors["bakeOff.contenders"] ?? [])].map((m) => (
              <p key={m} className="mt-1 text-xs text-rose-700 dark:text-rose-400">
                {m}
              </p>
            ))}
          </div>
        ) : null}
        {start.error && !Object.keys(fieldErrors).length ? (
          <p className="text-sm text-rose-700 dark:text-rose-400">{start.error.message}</p>
        ) : null}
        <div className="flex items-center justify-end gap-3">
          <button
            type="submit"
            disabled={start.isPending || notReady !== null}
            aria-describedby={notReady ? "workflow-not-ready" : undefined}
            className="rounded-md bg-emerald-700 px-4 py-2 text-sm font-medium text-white shadow-sm hover:bg-emerald-800 disabled:opacity-60"
          >
            {start.isPending ? "Starting…" : bakeOff.trim() ? "Start bake-off" : "Start task"}
          </button>
        </div>
      </form>
    </Panel>
  );
}
