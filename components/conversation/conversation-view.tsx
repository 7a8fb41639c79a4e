"use client";
// A conversation, live: messages as they come (the `conversations.live` subscription), what
// the mode decided where it happened (a routing with its candidates and scores, a vote's
// tally), mode switches as system lines, a person's `/task` with a link to the task it started, a banner when the loop guard stalled it, and, for
// operators, the composer (@mention completion from the conversation's agents), the mode
// picker with its config, and the end.
import { useMutation } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Panel } from "@/components/panel";
import { UsagePanel } from "@/components/session/usage-panel";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import type { AppRouter } from "@/server/api/root";
import { MentionComposer } from "./mention-composer";
import { ModePicker } from "./mode-picker";
import { NoteCard } from "./note-card";
import { SimulatedNote } from "@/components/simulated-note";

export type ConversationData = inferRouterOutputs<AppRouter>["conversations"]["get"];
type Entry = ConversationData["entries"][number];

const STATUS_TONE: Record<ConversationData["status"], string> = {
  open: "bg-emerald-100 text-emerald-900 dark:bg-emerald-950/60 dark:text-emerald-200",
  stalled: "bg-amber-100 text-amber-900 dark:bg-amber-950/60 dark:text-amber-200",
  terminated: "bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200",
};

const time = (at: string) => at.slice(11, 19);

/** Where "replay" leads (null in a replay). */
function ReplayLink({ href, tone }: { href: string | null; tone: string }) {
  if (!href) return null;
  return (
    <>
      {" · "}
      <a href={href} className={`underline-offset-2 hover:underline ${tone}`}>
        replay from here
      </a>
    </>
  );
}

function EntryRow({ entry, replayHref }: { entry: Entry; replayHref: string | null }) {
  switch (entry.kind) {
    case "person":
      return (
        <li className="flex justify-end" data-kind="person">
          <div className="max-w-[85%] rounded-lg bg-sky-700 px-3 py-2 text-sm break-words whitespace-pre-wrap text-white">
            <div className="mb-0.5 text-xs text-sky-100">
              {entry.byName} · {time(entry.at)}
              <ReplayLink href={replayHref} tone="text-sky-100" />
            </div>
            {entry.text}
          </div>
        </li>
      );
    case "agent":
      return (
        <li className="flex" data-kind="agent">
          <div className="max-w-[85%] rounded-lg border border-zinc-200 bg-white px-3 py-2 text-sm break-words whitespace-pre-wrap text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100">
            <div className="mb-0.5 text-xs font-semibold text-zinc-700 dark:text-zinc-300">
              @{entry.agent} · {time(entry.at)}
              <ReplayLink href={replayHref} tone="font-normal text-zinc-600 dark:text-zinc-400" />
            </div>
            {entry.text}
          </div>
        </li>
      );
    case "system":
      return (
        <li className="text-center text-xs text-zinc-700 dark:text-zinc-300" data-kind="system">
          {entry.text}
        </li>
      );
    case "call":
      return (
        <li className="text-xs text-zinc-600 dark:text-zinc-400" data-kind="call">
          → @{entry.agent} called{entry.caller === "person" ? "" : ` by @${entry.caller}`}
        </li>
      );
    case "failed":
      return (
        <li className="text-xs text-rose-700 dark:text-rose-300" data-kind="failed">
          @{entry.agent} could not answer ({entry.errorClass}): {entry.message}
        </li>
      );
    case "discarded":
      return (
        <li className="text-xs text-zinc-600 dark:text-zinc-400" data-kind="discarded">
          A reply{entry.agent ? ` of @${entry.agent}` : ""} was discarded ({entry.errorClass}): {entry.reason}
        </li>
      );
    case "note":
      return (
        <li data-kind={`note-${entry.note.kind}`}>
          <NoteCard note={entry.note} />
        </li>
      );
    case "progress":
      return (
        <li className="text-center text-xs text-emerald-800 dark:text-emerald-300" data-kind="progress">
          Progress ({entry.progress}): {entry.detail}
        </li>
      );
    case "stalled":
      return (
        <li
          className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950/40 dark:text-amber-100"
          data-kind="stalled"
        >
          Stalled: {entry.reason}.
        </li>
      );
    case "terminated":
      return (
        <li className="text-center text-sm font-medium text-zinc-800 dark:text-zinc-200" data-kind="terminated">
          Ended by {entry.byName}: {entry.reason}
        </li>
      );
    case "task":
      // A person's `/task` (req W13): a command, which no agent answers, and the session it started.
      return (
        <li className="flex flex-col items-end gap-1" data-kind="task" id={`entry-${entry.version}`}>
          <div className="max-w-[85%] rounded-lg border border-sky-700 bg-sky-50 px-3 py-2 text-sm break-words whitespace-pre-wrap text-sky-950 dark:border-sky-500 dark:bg-sky-950/40 dark:text-sky-50">
            <div className="mb-0.5 text-xs text-sky-800 dark:text-sky-200">
              {entry.byName} · command · {time(entry.at)}
            </div>
            <code className="font-mono">{entry.text}</code>
          </div>
          <a
            href={`/sessions/${entry.sessionId}`}
            className="text-xs font-medium text-sky-800 underline-offset-2 hover:underline dark:text-sky-300"
            data-testid="task-link"
          >
            Task started: <span className="font-mono">{entry.sessionId}</span> →
          </a>
        </li>
      );
  }
}

/** A replay's banner: the position, the way back to now, and (operators) a fork from here. */
function ReplayBanner({ view, canOperate }: { view: ConversationData; canOperate: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const fork = useMutation(trpc.sessions.fork.mutationOptions({ onSuccess: (r) => router.push(`/conversations/${r.sessionId}`) }));
  if (!view.asOf) return null;
  return (
    <div
      data-testid="replay-banner"
      className="flex flex-wrap items-center gap-3 rounded-md border border-sky-300 bg-sky-50 px-4 py-3 text-sm text-sky-950 dark:border-sky-800 dark:bg-sky-950/40 dark:text-sky-100"
    >
      <span>
        Replay: the conversation as it was at event {view.asOf.version} of {view.asOf.latest}.
      </span>
      <a className="underline" href={`/conversations/${view.id}`}>
        Back to now
      </a>
      {canOperate ? (
        <button
          type="button"
          disabled={fork.isPending}
          onClick={() => fork.mutate({ sessionId: view.id, atVersion: view.asOf!.version, reason: "manual" })}
          className="rounded-md bg-sky-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-sky-600 disabled:opacity-60"
        >
          Fork from here
        </button>
      ) : null}
      {fork.error ? (
        <span role="alert" className="text-rose-700 dark:text-rose-300">
          {fork.error.message}
        </span>
      ) : null}
    </div>
  );
}

export function ConversationView({ initial, canOperate }: { initial: ConversationData; canOperate: boolean }) {
  const trpc = useTRPC();
  const [view, setView] = useState(initial);
  const replay = initial.asOf !== null;
  useSubscription(
    trpc.conversations.live.subscriptionOptions(
      { sessionId: initial.id },
      { enabled: !replay, onData: (data) => setView((current) => (data.version >= current.version ? data : current)) },
    ),
  );
  const [text, setText] = useState("");
  const post = useMutation(trpc.conversations.post.mutationOptions({ onSuccess: () => setText("") }));
  const end = useMutation(trpc.conversations.terminate.mutationOptions());
  const postErrors = trpcFieldErrors(post.error);
  const open = view.status !== "terminated" && !replay;
  const thinking = view.inFlight.map((c) => c.agent);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="min-w-0 text-lg font-semibold break-words text-zinc-900 dark:text-zinc-100">{view.title}</h1>
        <span className={`rounded px-2 py-0.5 text-xs font-medium ${STATUS_TONE[view.status]}`} data-testid="conversation-status">
          {view.status}
        </span>
        <span
          className="rounded bg-zinc-100 px-2 py-0.5 font-mono text-xs text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200"
          data-testid="conversation-mode"
        >
          {view.mode}
        </span>
        {view.project ? <span className="text-xs text-zinc-600 dark:text-zinc-400">on {view.project.name}</span> : null}
      </div>

      {view.simulated ? <SimulatedNote workflow="conversation" projectId={view.project?.id ?? null} /> : null}

      <ReplayBanner view={view} canOperate={canOperate} />

      {view.status === "stalled" && !replay ? (
        <div
          role="status"
          data-testid="stalled-banner"
          className="rounded-md border border-amber-300 bg-amber-50 px-4 py-3 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950/40 dark:text-amber-100"
        >
          <strong>The agents stopped calling each other.</strong> Nobody is called until a person writes. To go on, post a message that
          @mentions the agent who should answer; or switch the mode; or end the conversation.
        </div>
      ) : null}

      <Panel title="Conversation">
        <ol className="space-y-2 p-4" data-testid="conversation-entries" aria-live="polite">
          {view.entries.length ? (
            view.entries.map((e) => (
              <EntryRow key={e.version} entry={e} replayHref={replay ? null : `/conversations/${view.id}?at=${e.version}`} />
            ))
          ) : (
            <li className="text-sm text-zinc-600 dark:text-zinc-400">Nothing yet. Say something; @mention an agent to call it.</li>
          )}
          {thinking.length ? (
            <li className="text-xs text-zinc-600 italic dark:text-zinc-400" data-testid="thinking">
              {thinking.map((a) => `@${a}`).join(", ")}{" "}
              {replay ? "had been called and had not answered yet" : `${thinking.length === 1 ? "is" : "are"} answering…`}
            </li>
          ) : null}
        </ol>
      </Panel>

      {canOperate && open ? (
        <Panel title="Say something">
          <form
            className="space-y-2 p-4"
            onSubmit={(e) => {
              e.preventDefault();
              if (text.trim()) post.mutate({ sessionId: view.id, text });
            }}
          >
            <MentionComposer value={text} onChange={setText} agents={view.agents} />
            {(postErrors.text ?? (post.error ? [post.error.message] : [])).map((m) => (
              <p key={m} className="text-xs text-rose-700 dark:text-rose-300" role="alert">
                {m}
              </p>
            ))}
            <div className="flex flex-wrap items-center justify-between gap-2">
              <p className="text-xs text-zinc-600 dark:text-zinc-400">
                Agents: {view.agents.map((a) => `@${a.id}`).join(", ")}. Type @ to pick one; <code className="font-mono">/task …</code>{" "}
                starts a task with this conversation as context.
              </p>
              <button
                type="submit"
                disabled={post.isPending || !text.trim()}
                className="rounded-md bg-emerald-700 px-4 py-2 text-sm font-medium text-white shadow-sm hover:bg-emerald-800 disabled:opacity-60"
              >
                {post.isPending ? "Posting…" : "Post"}
              </button>
            </div>
          </form>
        </Panel>
      ) : null}

      <div className="grid gap-4 lg:grid-cols-2">
        <ModePicker view={view} canOperate={canOperate && open} />
        <Panel title="About this conversation">
          <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 p-4 text-sm text-zinc-800 dark:text-zinc-200">
            <dt className="text-zinc-600 dark:text-zinc-400">Mode</dt>
            <dd>{view.modeDescription}</dd>
            <dt className="text-zinc-600 dark:text-zinc-400">Loop guard</dt>
            <dd>
              stalls after {view.stallAfter} agent turns without progress, or at once when agents call each other in a circle (
              {view.turns === 1 ? "1 turn" : `${view.turns} turns`} so far)
            </dd>
            {view.modeState.stepHistory.length ? (
              <>
                <dt className="text-zinc-600 dark:text-zinc-400">Steps</dt>
                <dd className="font-mono text-xs">{view.modeState.stepHistory.join(" → ")}</dd>
              </>
            ) : null}
          </dl>
          {canOperate && open ? (
            <div className="border-t border-zinc-200 p-4 dark:border-zinc-800">
              <button
                type="button"
                onClick={() => end.mutate({ sessionId: view.id, reason: "ended in the dashboard" })}
                disabled={end.isPending}
                className="rounded-md border border-rose-300 px-3 py-1.5 text-sm text-rose-800 hover:bg-rose-50 disabled:opacity-60 dark:border-rose-800 dark:text-rose-200 dark:hover:bg-rose-950/40"
              >
                End conversation
              </button>
              {end.error ? <p className="mt-1 text-xs text-rose-700 dark:text-rose-300">{end.error.message}</p> : null}
            </div>
          ) : null}
        </Panel>
      </div>
      {replay ? null : <UsagePanel sessionId={view.id} version={view.version} />}
    </div>
  );
}
