"use client";
// The session view's live state: the server-rendered first view, then every batch the
// `live.updates` subscription (SSE) sends, merged by event version so a batch seen twice
// (a reconnect, a refresh) changes nothing. A newer server render (router.refresh) merges
// in the same way.
import { useSubscription } from "@trpc/tanstack-react-query";
import { useEffect, useReducer, useState } from "react";
import { useTRPC } from "@/lib/trpc/client";
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
}

interface State {
  entries: SessionEntry[];
  status: SessionStatus;
  names: Record<string, string>;
}

type Action = { type: "merge"; entries: SessionEntry[]; status: SessionStatus; names: Record<string, string> };

/** A page left open on a long session keeps this many entries (Replay has them all). */
const MAX_ENTRIES = 5000;

function mergeEntries(current: SessionEntry[], incoming: SessionEntry[]): SessionEntry[] {
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
  return merged.length > MAX_ENTRIES ? merged.slice(-MAX_ENTRIES) : merged;
}

function reducer(state: State, action: Action): State {
  const newer = action.status.version >= state.status.version;
  return {
    entries: mergeEntries(state.entries, action.entries),
    status: newer ? action.status : state.status,
    names: { ...state.names, ...action.names },
  };
}

export function useLiveSession(initial: SessionView): LiveSession {
  const trpc = useTRPC();
  const [state, dispatch] = useReducer(reducer, initial, (v): State => ({ entries: v.entries, status: v.status, names: v.names }));
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
  const connection: Connection =
    subscription.status === "pending" ? "live" : subscription.status === "error" ? "closed" : everLive ? "reconnecting" : "connecting";

  return {
    ...state,
    connection,
    connectionError: subscription.status === "error" ? (subscription.error?.message ?? "the live connection closed") : null,
  };
}
