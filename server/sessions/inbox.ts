// The attention inbox: sessions that need a person — waiting for an operator's confirm,
// escalated at the loop limit, or failed — and that nobody has acknowledged since. Read from
// the sessions projection (its `attention` columns, kept by the events that change them);
// an acknowledgement is an event on the session (who took note, when), so it is in the
// history like everything else, and the session comes back when it needs someone again.
import { setTimeout as delay } from "node:timers/promises";
import type pg from "pg";
import { z } from "zod";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";
import type { Actor } from "../events/catalog";
import type { EventStore } from "../events/store";
import { wakeSignal } from "./view/follow";
import { SESSION_CHANGES, sessionEventsListener, type SessionEventsListener } from "./view/listener";

export const ATTENTION_KINDS = ["waiting", "escalated", "failed"] as const;
export type Attention = (typeof ATTENTION_KINDS)[number];

export const ZInboxFilters = z.object({
  projectId: z.string().min(1).max(100).optional(),
  /** Only sessions the asking user started. */
  mine: z.boolean().optional(),
  /** Only how many (the header's count): no items read or sent. */
  countOnly: z.boolean().optional(),
});
export type InboxFilters = z.infer<typeof ZInboxFilters>;

export interface InboxItem {
  sessionId: string;
  title: string;
  projectId: string | null;
  state: string;
  outcome: string | null;
  attention: Attention;
  since: string;
  createdBy: string;
}

export interface Inbox {
  count: number;
  items: InboxItem[];
}

const INBOX_LIMIT = 100;

/** What needs a person, newest first (at most 100), and how many in all. `me`: the asking user's actor label. */
export async function readInbox(db: Queryable, filters: InboxFilters, me: string): Promise<Inbox> {
  const values: unknown[] = [filters.projectId ?? null, filters.mine ? me : null];
  const r = await db.query<{
    id: string;
    title: string;
    project_id: string | null;
    state: string;
    outcome: string | null;
    attention: Attention;
    attention_since: Date;
    created_by: string;
    total: string;
  }>(
    `SELECT id, title, project_id, state, outcome, attention, attention_since, created_by, count(*) OVER () AS total
     FROM sessions
     WHERE attention IS NOT NULL AND acked_at IS NULL
       AND ($1::text IS NULL OR project_id = $1) AND ($2::text IS NULL OR created_by = $2)
     ORDER BY attention_since DESC, id DESC
     LIMIT ${INBOX_LIMIT}`,
    values,
  );
  return {
    count: Number(r.rows[0]?.total ?? 0),
    items: r.rows.map((row) => ({
      sessionId: row.id,
      title: row.title,
      projectId: row.project_id,
      state: row.state,
      outcome: row.outcome,
      attention: row.attention,
      since: row.attention_since.toISOString(),
      createdBy: row.created_by,
    })),
  };
}

/** How many sessions need a person (the header's count). */
export async function countInbox(db: Queryable): Promise<number> {
  const r = await db.query<{ n: string }>("SELECT count(*) AS n FROM sessions WHERE attention IS NOT NULL AND acked_at IS NULL");
  return Number(r.rows[0]?.n ?? 0);
}

export const ZAcknowledgeInput = z.object({ sessionId: z.string().min(1).max(100) });

/**
 * Takes note of why the session needs a person: an AttentionAcknowledged event with the
 * actor, appended at the version read, so two people acknowledging at once record it once
 * (the second is told it was acknowledged already). Progress appended meanwhile (a webhook
 * delivery) is no reason to refuse: the check is made again on the new version.
 */
export async function acknowledge(store: EventStore, db: Queryable, sessionId: string, actor: Actor): Promise<{ version: number }> {
  for (let attempt = 1; ; attempt++) {
    const r = await db.query<{ attention: Attention | null; acked_at: Date | null; version: number }>(
      "SELECT s.attention, s.acked_at, st.version FROM sessions s JOIN streams st ON st.id = s.id WHERE s.id = $1",
      [sessionId],
    );
    const row = r.rows[0];
    if (!row) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
    if (!row.attention) throw new AppError("CONFLICT", `session ${sessionId} does not need anyone right now: nothing to acknowledge`);
    if (row.acked_at) throw new AppError("CONFLICT", `session ${sessionId} was acknowledged already`);
    try {
      const result = await store.append(sessionId, row.version, [{ type: "AttentionAcknowledged", data: { attention: row.attention } }], {
        actor,
      });
      return { version: result.version };
    } catch (err) {
      if (!(err instanceof AppError && err.code === "CONFLICT") || attempt >= 3) throw err;
    }
  }
}

/** Bursts of changes are read as one: the inbox is read at most this often. */
const INBOX_COALESCE_MS = 150;

/**
 * The inbox, live: once at once, then again after any sessions row changed (the sessions
 * table's trigger rings the web process's one LISTEN connection), yielded only when it changed.
 * The page header's count (`countOnly`) goes through the process's `InboxCountFeed` instead.
 */
export async function* followInbox(
  db: Queryable,
  listener: SessionEventsListener,
  filters: InboxFilters,
  me: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<Inbox> {
  const wake = wakeSignal();
  const unsubscribe = await listener.subscribe(SESSION_CHANGES, wake.wake);
  try {
    let last = "";
    while (!signal?.aborted) {
      const inbox = filters.countOnly ? { count: await countInbox(db), items: [] } : await readInbox(db, filters, me);
      const key = JSON.stringify(inbox);
      if (key !== last) {
        last = key;
        yield inbox;
      }
      await wake.wait(signal);
      await new Promise((r) => setTimeout(r, INBOX_COALESCE_MS));
    }
  } finally {
    unsubscribe();
  }
}

/** One reading of the count for whoever follows it: each new value (or the failure) once. */
class CountRun {
  count = 0;
  /** Bumped at each value published and at the failure: a follower yields what it has not seen. */
  seq = 0;
  failure: { error: unknown } | null = null;
  followers = 0;
  readonly stop = new AbortController();
  private readonly waiters = new Set<() => void>();

  publish(change: { count: number } | { error: unknown }): void {
    if ("count" in change) this.count = change.count;
    else this.failure = change;
    this.seq++;
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves after the next publication, or when `signal` aborts. */
  next(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        this.waiters.delete(done);
        resolve();
      };
      this.waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}

/**
 * The inbox's count for every page of this web process: every page shows it in its header,
 * through a stream of its own; the count is read once per change of a sessions row for all of
 * them, not once per open page (docs/scaling.md, "Many sessions at once"). A reading runs while
 * anyone follows it; one that fails (the database gone) ends every stream that follows it with
 * the error, as each stream's own reading did, and the next follower (a page reconnecting)
 * starts a new one.
 */
export class InboxCountFeed {
  private run: CountRun | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly listener: SessionEventsListener,
    private readonly coalesceMs = INBOX_COALESCE_MS,
  ) {}

  /** The count at once (once read), then each time it changes, until `signal` aborts. */
  async *follow(signal: AbortSignal | undefined): AsyncGenerator<number> {
    const run = this.run ?? this.start();
    run.followers++;
    try {
      for (let seen = 0; !signal?.aborted;) {
        if (run.seq === seen) await run.next(signal);
        if (signal?.aborted || run.seq === seen) continue;
        seen = run.seq;
        if (run.failure) throw run.failure.error;
        yield run.count;
      }
    } finally {
      if (--run.followers === 0) this.end(run);
    }
  }

  private start(): CountRun {
    const run = (this.run = new CountRun());
    void this.read(run);
    return run;
  }

  private end(run: CountRun): void {
    run.stop.abort();
    if (this.run === run) this.run = null;
  }

  private async read(run: CountRun): Promise<void> {
    const wake = wakeSignal();
    let unsubscribe: (() => void) | null = null;
    try {
      // Subscribed before the first read: a change committed after it rings.
      unsubscribe = await this.listener.subscribe(SESSION_CHANGES, wake.wake);
      let first = true;
      while (!run.stop.signal.aborted) {
        const count = await countInbox(this.db);
        if (first || count !== run.count) run.publish({ count });
        first = false;
        await wake.wait(run.stop.signal);
        await delay(this.coalesceMs, undefined, { signal: run.stop.signal }).catch(() => {});
      }
    } catch (error) {
      if (this.run === run) this.run = null;
      run.publish({ error });
    } finally {
      unsubscribe?.();
    }
  }
}

const sharedFeeds = globalThis as typeof globalThis & { __catcafeInboxCounts?: WeakMap<pg.Pool, InboxCountFeed> };

/** The process's one inbox count for the database behind `pool` (woken by its one listener). */
export function inboxCountFeed(pool: pg.Pool): InboxCountFeed {
  sharedFeeds.__catcafeInboxCounts ??= new WeakMap();
  let feed = sharedFeeds.__catcafeInboxCounts.get(pool);
  if (!feed) sharedFeeds.__catcafeInboxCounts.set(pool, (feed = new InboxCountFeed(pool, sessionEventsListener(pool))));
  return feed;
}
