"use client";
// The session view's live state: the server-rendered first view, then every batch the
// `live.updates` subscription (SSE) sends, merged by event version so a batch seen twice
// (a reconnect, a refresh) changes nothing. A newer server render (router.refresh) merges
// in the same way. The first view holds the latest page of entries; `loadOlder` reads the
// page before the earliest one held (`live.older`) and puts it in front.
import { useSubscription } from "@trpc/tanstack-react-query";
import { useCallback, useEffect, useReducer, useState } from "react";
import { useTRPC, useTRPCClient } from "@/lib/trpc/client";
import type { SessionEntry } from "@/server/sessions/view/entries";
import type { SessionView } from "@/server/sessions/view/load";
import type { SessionStatus } from "@/server/sessions/view/progress";

export type Connection = "connecting" | "live" | "reconnecting" | "closed";

export interface LiveSession {
  entries: SessionEntry[];
  status: SessionStatus;
  names: Record<string, string>;
  connection: Connection;
  /** Why the live connection is closed (signed out, no access), when it is. */
  connectionError: string | null;
  /** Events recorded before the earliest entry held (0: the page has the session from its start). */
  earlier: number;
  older: { load: () => void; loading: boolean; error: string | null };
}

interface State {
  entries: SessionEntry[];
  status: SessionStatus;
  names: Record<string, string>;
  earlier: number;
}

type Action =
  | { type: "merge"; entries: SessionEntry[]; status: SessionStatus; names: Record<string, string> }
  | { type: "older"; entries: SessionEntry[]; names: Record<string, string>; earlier: number };

/** A page left open on a long session keeps this many entries (Replay has them all). */
const MAX_ENTRIES = 5000;

function mergeEntries(current: SessionEntry[], incoming: SessionEntry[], max = MAX_ENTRIES): SessionEntry[] {
  if (incoming.length === 0) return current;
  const last = current.at(-1)?.version ?? 0;
  let merged: SessionEntry[];
  // The common case: strictly newer entries are appended.
  if (incoming.every((e) => e.version > last)) merged = [...current, ...incoming];
  else {
    const byVersion = new Map(current.map((e) => [e.version, e]));
    for (const e of incoming) byVersion.set(e.version, e);
    merged = [...byVersion.values()].sort((a, b) => a.version - b.version);
  }
  return merged.length > max ? merged.slice(-max) : merged;
}

/**
 * The names held, with those of `incoming` added; the same object when it adds nothing, so
 * that every part of the view reading names through the session's context (each timeline
 * entry) is not drawn again for a batch that names no one new.
 */
export function mergeNames(current: Record<string, string>, incoming: Record<string, string>): Record<string, string> {
  return Object.entries(incoming).every(([id, name]) => current[id] === name) ? current : { ...current, ...incoming };
}

/** Events before the earliest entry: versions count a session's events from 1 (inherited ones included). */
function earlierThan(entries: SessionEntry[], fallback: number): number {
  return entries[0] ? entries[0].version - 1 : fallback;
}

function reducer(state: State, action: Action): State {
  if (action.type === "older") {
    // Asked for: kept whatever the cap on what arrives live.
    const entries = mergeEntries(state.entries, action.entries, Number.POSITIVE_INFINITY);
    return { ...state, entries, names: mergeNames(state.names, action.names), earlier: action.entries.length ? action.earlier : 0 };
  }
  const newer = action.status.version >= state.status.version;
  const entries = mergeEntries(state.entries, action.entries);
  return {
    entries,
    status: newer ? action.status : state.status,
    names: mergeNames(state.names, action.names),
    earlier: entries[0]?.version === state.entries[0]?.version ? state.earlier : earlierThan(entries, state.earlier),
  };
}

export function useLiveSession(initial: SessionView): LiveSession {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const [state, dispatch] = useReducer(reducer, initial, (v): State => ({
    entries: v.entries,
    status: v.status,
    names: v.names,
    earlier: v.omitted,
  }));
  const [older, setOlder] = useState<{ loading: boolean; error: string | null }>({ loading: false, error: null });
  // The subscription starts where the server render ended; reconnects resume by lastEventId.
  const [from] = useState(() => ({ sessionId: initial.header.id, afterVersion: initial.status.version }));
  const [everLive, setEverLive] = useState(false);

  useEffect(() => {
    dispatch({ type: "merge", entries: initial.entries, status: initial.status, names: initial.names });
  }, [initial]);

  const subscription = useSubscription(
    trpc.live.updates.subscriptionOptions(from, {
      onStarted: () => setEverLive(true),
      onData: ({ data }) => dispatch({ type: "merge", entries: data.entries, status: data.status, names: data.names }),
    }),
  );
  const sessionId = initial.header.id;
  const before = state.entries[0]?.version ?? null;
  const loadOlder = useCallback(() => {
    if (before === null || before <= 1) return;
    setOlder({ loading: true, error: null });
    client.live.older.query({ sessionId, beforeVersion: before }).then(
      (page) => {
        dispatch({ type: "older", entries: page.entries, names: page.names, earlier: page.omitted });
        setOlder({ loading: false, error: null });
      },
      (err: unknown) => setOlder({ loading: false, error: err instanceof Error ? err.message : String(err) }),
    );
  }, [client, sessionId, before]);

  const connection: Connection =
    subscription.status === "pending" ? "live" : subscription.status === "error" ? "closed" : everLive ? "reconnecting" : "connecting";

  return {
    ...state,
    connection,
    connectionError: subscription.status === "error" ? (subscription.error?.message ?? "the live connection closed") : null,
    older: { load: loadOlder, ...older },
  };
}
