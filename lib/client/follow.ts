// Following a session live: its events as they are recorded, then how it ended. By default
// through the `live.updates` subscription (Server-Sent Events, pushed as the events are
// appended); `via: "poll"` reads `sessions.timeline` and `tasks.get` instead, once a second
// at most, for servers or networks where a long-lived SSE response does not get through.
import { setTimeout as sleep } from "node:timers/promises";
import type { CatCafeClient } from "./client";
import type { RouterOutputs } from "./types";

import { SUCCESS_OUTCOMES } from "../outcomes";

export { SUCCESS_OUTCOMES };

/** Polling never asks more often than this. */
export const MIN_POLL_INTERVAL_MS = 1000;
const PAGE = 500;

type LiveView = RouterOutputs["live"]["session"];

/** One recorded event, as both transports give it. */
export interface FollowEntry {
  version: number;
  /** The stream that recorded it: an ancestor's id for what a fork inherited. */
  streamId: string;
  type: string;
  /** `user:<id>`, `runner:<id>`, `agent:<id>` or `system`. */
  actor: string;
  /** The person's display name for a `user:` actor (subscription only). */
  actorName: string | null;
  recordedAt: string;
  summary: string;
  /** A failure's class and one-line diagnosis (subscription only; null otherwise). */
  failure: { errorClass: string; diagnosis: string } | null;
}

/** Where the session stands. */
export interface FollowStatus {
  sessionId: string;
  version: number;
  /** The workflow state, e.g. `awaiting_operator_confirm`, `building`, `approved`. */
  state: string;
  status: "none" | "active" | "finished";
  outcome: string | null;
  step: { role: string; state: string } | null;
}

export type SessionUpdate =
  | { type: "event"; entry: FollowEntry }
  /** The run stopped for a person (e.g. `awaiting_operator_confirm`): nothing moves until they act. */
  | { type: "waiting"; status: FollowStatus }
  /** The session reached a terminal state; the last update. */
  | { type: "finished"; status: FollowStatus; success: boolean };

export interface FollowOptions {
  /** `subscription` (default): pushed over SSE. `poll`: read every `intervalMs`. */
  via?: "subscription" | "poll";
  /** Poll interval (≥ 1000 ms; default 1000). */
  intervalMs?: number;
  /** Events after this version only (default: from the start). */
  afterVersion?: number;
  /** End after the first `waiting` update instead of waiting for a person to act. */
  stopWhenWaiting?: boolean;
  signal?: AbortSignal;
}

export function isSuccessfulOutcome(outcome: string | null): boolean {
  return outcome !== null && SUCCESS_OUTCOMES.includes(outcome);
}

/** Active with no step scheduled: the workflow waits in a state only a person's command leaves. */
export function isWaitingForPerson(status: Pick<FollowStatus, "status" | "step">): boolean {
  return status.status === "active" && status.step === null;
}

interface Snapshot {
  entries: FollowEntry[];
  status: FollowStatus;
}

function fromLive(
  sessionId: string,
  batch: { entries: LiveView["entries"]; status: LiveView["status"] },
  names: Map<string, string>,
): Snapshot {
  const s = batch.status;
  return {
    entries: batch.entries.map((e) => ({
      version: e.version,
      streamId: e.streamId,
      type: e.type,
      actor: e.actor,
      actorName: names.get(e.actor) ?? null,
      recordedAt: e.recordedAt,
      summary: e.summary,
      failure: e.failure,
    })),
    status: {
      sessionId,
      version: s.version,
      state: s.state,
      status: s.status,
      outcome: s.outcome,
      step: s.step ? { role: s.step.role, state: s.step.state } : null,
    },
  };
}

/** The subscription's batches as an async sequence (ends when the caller stops reading). */
async function* liveSnapshots(
  client: CatCafeClient,
  sessionId: string,
  afterVersion: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<Snapshot> {
  // What the subscription's callbacks leave for the reader, and how they wake it.
  const inbox = {
    queue: [] as Snapshot[],
    // Each batch names only the users it shows for the first time.
    names: new Map<string, string>(),
    failed: null as { error: unknown } | null,
    ended: false,
    wake: null as (() => void) | null,
  };
  const notify = () => {
    inbox.wake?.();
    inbox.wake = null;
  };
  signal?.addEventListener("abort", notify, { once: true });
  const subscription = client.live.updates.subscribe(
    { sessionId, afterVersion },
    {
      signal,
      onData: (tracked) => {
        for (const [actor, name] of Object.entries(tracked.data.names)) inbox.names.set(actor, name);
        inbox.queue.push(fromLive(sessionId, tracked.data, inbox.names));
        notify();
      },
      onError: (error) => {
        inbox.failed = { error };
        notify();
      },
      onComplete: () => {
        inbox.ended = true;
        notify();
      },
    },
  );
  try {
    for (;;) {
      const next = inbox.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (inbox.failed) throw inbox.failed.error;
      if (inbox.ended) throw new Error(`the server ended the live updates of ${sessionId}`);
      signal?.throwIfAborted();
      await new Promise<void>((resolve) => (inbox.wake = resolve));
    }
  } finally {
    signal?.removeEventListener("abort", notify);
    subscription.unsubscribe();
  }
}

/** The timeline and state, read again every interval. */
async function* polledSnapshots(
  client: CatCafeClient,
  sessionId: string,
  afterVersion: number,
  intervalMs: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<Snapshot> {
  let after = afterVersion;
  for (let first = true; ; first = false) {
    if (!first) await sleep(intervalMs, undefined, { signal });
    // The state first, then the timeline up to now: when the state says finished, every
    // event up to that version is in the entries before the end is reported.
    const task = await client.tasks.get.query({ sessionId }, { signal });
    const entries: FollowEntry[] = [];
    for (;;) {
      const page = await client.sessions.timeline.query({ sessionId, afterVersion: after, limit: PAGE }, { signal });
      entries.push(...page.map((e) => ({ ...e, actorName: null, failure: null })));
      after = page.at(-1)?.version ?? after;
      if (page.length < PAGE) break;
    }
    yield {
      entries,
      status: {
        sessionId,
        version: task.version,
        state: task.fsm,
        status: task.status,
        outcome: task.outcome,
        step: task.step ? { role: task.step.role, state: task.step.state } : null,
      },
    };
  }
}

export async function* followSession(
  client: CatCafeClient,
  sessionId: string,
  options: FollowOptions = {},
): AsyncGenerator<SessionUpdate, void, void> {
  const after = options.afterVersion ?? 0;
  // A session that does not exist (or is no task) fails here with NOT_FOUND, rather than
  // leaving a subscription waiting for events that never come.
  if (options.via !== "poll") await client.tasks.get.query({ sessionId }, { signal: options.signal });
  const snapshots =
    options.via === "poll"
      ? polledSnapshots(
          client,
          sessionId,
          after,
          Math.max(MIN_POLL_INTERVAL_MS, options.intervalMs ?? MIN_POLL_INTERVAL_MS),
          options.signal,
        )
      : liveSnapshots(client, sessionId, after, options.signal);
  let seen = after;
  let waitingAt: number | null = null;
  try {
    for await (const { entries, status } of snapshots) {
      for (const entry of entries) {
        // A resumed subscription may send an event twice: each is reported once.
        if (entry.version <= seen) continue;
        seen = entry.version;
        yield { type: "event", entry };
      }
      if (status.status === "finished") {
        yield { type: "finished", status, success: isSuccessfulOutcome(status.outcome) };
        return;
      }
      if (!isWaitingForPerson(status)) {
        waitingAt = null;
      } else if (waitingAt !== status.version) {
        waitingAt = status.version;
        yield { type: "waiting", status };
        if (options.stopWhenWaiting) return;
      }
    }
  } finally {
    await snapshots.return(undefined);
  }
}
