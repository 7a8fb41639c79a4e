// The server's settings overrides (docs/configuration.md): what admins changed in the dashboard
// or through the API, as ConfigChanged events in the stream `config-server`, folded into one
// override of settings.json. Read where a task starts (server/projects, server/tasks) and
// where a step runs (the runner reads the access rules in force: server/runner/agent-access.ts).
import type { Queryable } from "../db/pool";
import type { AppEventOf } from "../events/catalog";
import type { EventStore } from "../events/store";
import { ZSettingsOverride, type SettingsOverride } from "./schemas";

export const SERVER_CONFIG_STREAM = "config-server";

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A copy of `doc` with `path` set to `value` (deleted when undefined; emptied objects go too). */
export function setAtPath<T>(doc: T, path: readonly (string | number)[], value: unknown): T {
  const [head, ...rest] = path;
  if (head === undefined) return value as T;
  const base: Record<string | number, unknown> = isObject(doc) ? { ...doc } : {};
  const next = rest.length ? setAtPath(base[head], rest, value) : value;
  if (next === undefined || (isObject(next) && Object.keys(next).length === 0)) delete base[head];
  else base[head] = next;
  return base as T;
}

/** A configuration stream's events; none before its first change. */
export async function readConfigStream(
  store: EventStore,
  stream: string,
  options: { fromVersion?: number; toVersion?: number; db?: Queryable } = {},
) {
  if ((await store.streamVersion(stream, options.db)) === null) return [];
  return store.readStream(stream, options);
}

/**
 * The server's settings overrides: its config stream folded (every change applied in order).
 * Read through `db` (a transaction's client) when given, else through the store's pool.
 */
export async function serverOverride(store: EventStore, db?: Queryable): Promise<{ override: SettingsOverride; version: number }> {
  const events = await readConfigStream(store, SERVER_CONFIG_STREAM, { db });
  let doc: Record<string, unknown> = {};
  for (const e of events) {
    if (e.type !== "ConfigChanged") continue;
    for (const c of (e.data as AppEventOf<"ConfigChanged">["data"]).changes) doc = setAtPath(doc, c.path, c.to);
  }
  return { override: ZSettingsOverride.parse(doc), version: events.at(-1)?.version ?? 0 };
}
