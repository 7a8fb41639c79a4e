// Loads what the session page shows at first paint: the session's header (title, lineage
// both ways, who started it), its status, and its latest entries with the names of the
// people who acted. Live updates then continue from `status.version` (./follow.ts); earlier
// pages are read on demand (`loadOlderEntries`, ./pages.ts says what a page holds). Neither
// reads the whole stream: the status comes from the progress fold's nearest snapshot and the
// events after it, the entries from the stream's tail (docs/scaling.md, "Long sessions").
import type { Db } from "../../db/pool";
import type { PrismaClient } from "../../db/generated/client";
import { allSimulated } from "../../../lib/simulated";
import { withUserNames } from "../../auth/names";
import { AppError } from "../../errors";
import { foldStream, LATEST_VERSION } from "../../events/fold-read";
import type { EventStore } from "../../events/store";
import type { RecordedEvent } from "../../events/types";
import { toSessionEntry, type SessionEntry } from "./entries";
import { startedTask } from "../../task-engine";
import { lastPage, type EventPage } from "./pages";
import { progressFold, statusOf, type SessionStatus } from "./progress";

export interface SessionViewDeps {
  pool: Db;
  prisma: PrismaClient;
  store: EventStore;
}

export interface SessionLink {
  id: string;
  title: string;
  state: string;
}

export interface SessionHeader {
  id: string;
  title: string;
  workflow: string;
  createdBy: string;
  createdAt: string;
  project: string | null;
  projectId: string | null;
  prompt: string | null;
  /** Every agent the task started with is simulated (the scripted brain): the page says its content is canned. */
  simulated: boolean;
  parent: (SessionLink & { atVersion: number; reason: string | null }) | null;
  children: Array<SessionLink & { atVersion: number | null }>;
  /** The conversation whose `/task` started it (req W13), and the command's version there. */
  conversation: (SessionLink & { version: number }) | null;
}

export interface SessionView {
  header: SessionHeader;
  status: SessionStatus;
  entries: SessionEntry[];
  /** Events before the first entry that were left out (`live.older` reads them; Replay has them all). */
  omitted: number;
  /** Display names of the users among the actors, by actor label (`user:<id>`). */
  names: Record<string, string>;
}

export const DEFAULT_ENTRY_LIMIT = 1000;
const MAX_CHILDREN = 50;

export async function loadSessionView(deps: SessionViewDeps, sessionId: string, options: { limit?: number } = {}): Promise<SessionView> {
  const session = await deps.prisma.session.findUnique({
    where: { id: sessionId },
    select: { id: true, title: true, workflow: true, state: true, parentId: true, forkVersion: true, createdBy: true, createdAt: true },
  });
  if (!session) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  const [{ state: progress, version }, parent, children] = await Promise.all([
    foldStream({ pool: deps.pool, registry: deps.store.registry }, progressFold, sessionId, LATEST_VERSION),
    session.parentId
      ? deps.prisma.session.findUnique({ where: { id: session.parentId }, select: { id: true, title: true, state: true } })
      : null,
    deps.prisma.session.findMany({
      where: { parentId: sessionId },
      select: { id: true, title: true, state: true, forkVersion: true },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: MAX_CHILDREN,
    }),
  ]);
  const status = statusOf(progress, session.state);
  const runningStepId = status.status === "active" ? (status.step?.id ?? null) : null;
  // The page ends where the fold did: an event appended since comes with the live updates.
  const [{ shown, earlier }, forkedEvent] = await Promise.all([
    pageBefore(deps.store, sessionId, version + 1, options.limit ?? DEFAULT_ENTRY_LIMIT, runningStepId),
    // A fork's own first event records why it was made (the events before it are its parent's).
    session.parentId && session.forkVersion !== null
      ? deps.store.readStream(sessionId, { fromVersion: session.forkVersion + 1, toVersion: session.forkVersion + 1 })
      : [],
  ]);
  const summarize = (type: string, data: unknown) => deps.store.registry.summarize(type, data);
  const entries = shown.map((e) => toSessionEntry(e, summarize));
  const forked = forkedEvent.find((e) => e.type === "SessionForked" && e.streamId === sessionId)?.data as { reason?: string } | undefined;
  const config = startedTask(progress.task)?.config ?? null;
  const origin = config?.origin ?? null;
  const conversation = origin
    ? await deps.prisma.session.findUnique({ where: { id: origin.conversationId }, select: { id: true, title: true, state: true } })
    : null;
  return {
    header: {
      id: session.id,
      title: session.title,
      workflow: session.workflow,
      createdBy: session.createdBy,
      createdAt: session.createdAt.toISOString(),
      project: config?.project.name ?? null,
      projectId: config?.project.id ?? null,
      prompt: config?.prompt ?? null,
      simulated: allSimulated(Object.values(config?.agents ?? {})),
      parent: session.parentId
        ? {
            id: session.parentId,
            title: parent?.title ?? session.parentId,
            state: parent?.state ?? "unknown",
            atVersion: session.forkVersion ?? 0,
            reason: forked?.reason ?? null,
          }
        : null,
      children: children.map((c) => ({ id: c.id, title: c.title, state: c.state, atVersion: c.forkVersion })),
      conversation: origin
        ? {
            id: origin.conversationId,
            title: conversation?.title ?? origin.conversationId,
            state: conversation?.state ?? "unknown",
            version: origin.version,
          }
        : null,
    },
    status,
    ...(await namedEntries(deps, entries, [session.createdBy])),
    omitted: earlier,
  };
}

export interface OlderEntries {
  entries: SessionEntry[];
  /** Events before these (0: the first is the session's first). */
  omitted: number;
  names: Record<string, string>;
}

/** The page of entries before `beforeVersion` (what "Load older" adds above the timeline). */
export async function loadOlderEntries(
  deps: Pick<SessionViewDeps, "prisma" | "store">,
  sessionId: string,
  beforeVersion: number,
  limit: number,
): Promise<OlderEntries> {
  if (beforeVersion <= 1) await deps.store.readStream(sessionId, { toVersion: 0 }); // NOT_FOUND for no session
  const { shown, earlier } = await pageBefore(deps.store, sessionId, beforeVersion, limit);
  const summarize = (type: string, data: unknown) => deps.store.registry.summarize(type, data);
  const entries = shown.map((e) => toSessionEntry(e, summarize));
  return { ...(await namedEntries(deps, entries)), omitted: earlier };
}

/**
 * The page of events before `beforeVersion` (./pages.ts `lastPage`), read back from it in
 * growing ranges until one holds a page (streamed chunks do not count); `earlier` counts
 * every event before the page.
 */
async function pageBefore(
  store: EventStore,
  sessionId: string,
  beforeVersion: number,
  limit: number,
  runningStepId: string | null = null,
): Promise<EventPage> {
  let events: RecordedEvent[] = [];
  let from = beforeVersion;
  for (let span = limit * 2; from > 1; span *= 2) {
    const to = from - 1;
    from = Math.max(1, from - span);
    events = [...(await store.readStream(sessionId, { fromVersion: from, toVersion: to })), ...events];
    if (lastPage(events, limit).earlier > 0) break;
  }
  const page = lastPage(events, limit, runningStepId);
  return { shown: page.shown, earlier: Math.max(0, from - 1) + page.earlier };
}

/** Entries with the people they name resolved (req X2): labels in summaries and details replaced, actors' names beside them. */
export async function namedEntries(
  deps: Pick<SessionViewDeps, "prisma">,
  entries: SessionEntry[],
  also: string[] = [],
): Promise<{ entries: SessionEntry[]; names: Record<string, string> }> {
  const { value, names } = await withUserNames(deps.prisma, entries, also);
  return { entries: value, names };
}
