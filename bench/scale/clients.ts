// The scale run's HTTP clients of the production web server: a person signed in through
// next-auth's credentials form (over HTTP, no browser), live viewers following sessions over
// Server-Sent Events (`live.updates`, what the session page subscribes to, and `inbox.live`'s
// count, what every page's header follows) and a dashboard reader polling the sessions list
// through tRPC.
import { performance } from "node:perf_hooks";
import type { Credentials } from "../lib/web-app";
import { sleep } from "../lib/timing";

const cookiesOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(";")[0]!);

/** A `Cookie` header value holding a signed-in session, as the sign-in form gets it. */
export async function signInOverHttp(webUrl: string, who: Credentials): Promise<string> {
  const csrf = await fetch(`${webUrl}/api/auth/csrf`);
  if (!csrf.ok) throw new Error(`GET /api/auth/csrf answered HTTP ${csrf.status}`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await fetch(`${webUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookiesOf(csrf).join("; "), origin: webUrl },
    body: new URLSearchParams({ csrfToken, email: who.email, password: who.password, callbackUrl: `${webUrl}/`, json: "true" }),
  });
  const session = cookiesOf(res).find((c) => /session-token=/.test(c));
  if (!session) throw new Error(`signing in over HTTP gave no session cookie (HTTP ${res.status})`);
  return session;
}

export interface Counted {
  /** Errors by kind, e.g. `sse_http_500`, `dashboard_timeout`. */
  errors: Record<string, number>;
}

export const countError = (c: Counted, kind: string) => (c.errors[kind] = (c.errors[kind] ?? 0) + 1);

interface LiveEntry {
  version: number;
  recordedAt: string;
}

/** The entries of one SSE message's batch (`{ entries: [...] }`, maybe wrapped by tRPC). */
function entriesIn(value: unknown): LiveEntry[] {
  if (value === null || typeof value !== "object") return [];
  const entries = (value as { entries?: unknown }).entries;
  if (Array.isArray(entries))
    return entries.filter((e): e is LiveEntry => typeof e?.version === "number" && typeof e?.recordedAt === "string");
  for (const v of Object.values(value)) {
    const found = entriesIn(v);
    if (found.length) return found;
  }
  return [];
}

/** Each message of an SSE response's body: its data parsed (pings left out), when it arrived, whether it was tRPC's error. */
async function* sseMessages(body: AsyncIterable<Uint8Array>): AsyncGenerator<{ data: unknown; at: number; error: boolean }> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    const at = performance.timeOrigin + performance.now();
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const lines = buffer.slice(0, end).split("\n");
      buffer = buffer.slice(end + 2);
      const error = lines.some((l) => l.startsWith("event: serialized-error"));
      const text = lines
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
        .join("\n");
      if (!text) continue;
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        continue; // a ping
      }
      yield { data, at, error };
    }
  }
}

/**
 * A tRPC subscription over SSE until `signal` aborts: `on.open` once its answer came,
 * `on.message` for each message; failures counted as `<kind>_…`.
 */
async function followSse(
  url: string,
  cookie: string,
  kind: string,
  signal: AbortSignal,
  out: Counted,
  on: { open?: () => void; message: (data: unknown, at: number) => void },
): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "text/event-stream", cookie }, signal });
  } catch (err) {
    if (!signal.aborted) countError(out, `${kind}_connect_${(err as Error).name}`);
    return;
  }
  if (!res.ok || !res.body) {
    countError(out, `${kind}_http_${res.status}`);
    return;
  }
  on.open?.();
  try {
    for await (const { data, at, error } of sseMessages(res.body as unknown as AsyncIterable<Uint8Array>)) {
      if (error) countError(out, `${kind}_stream_error`);
      on.message(data, at);
    }
  } catch (err) {
    if (!signal.aborted) countError(out, `${kind}_dropped_${(err as Error).name}`);
  }
}

/**
 * A viewer of one session's live view until `signal` aborts: each entry recorded after the
 * stream opened gives one lag sample, its recorded_at (the appending transaction's start, on
 * the database's clock, the same machine's clock) → the message arriving here.
 */
export function followLive(
  webUrl: string,
  cookie: string,
  sessionId: string,
  afterVersion: number,
  signal: AbortSignal,
  out: Counted & { lagsMs: number[] },
): Promise<void> {
  const input = encodeURIComponent(JSON.stringify({ sessionId, afterVersion }));
  const seen = new Set<number>();
  let opened = Number.POSITIVE_INFINITY;
  return followSse(`${webUrl}/api/trpc/live.updates?input=${input}`, cookie, "sse", signal, out, {
    open: () => (opened = Date.now()),
    message: (data, at) => {
      for (const e of entriesIn(data)) {
        const recorded = Date.parse(e.recordedAt);
        if (seen.has(e.version) || recorded < opened) continue;
        seen.add(e.version);
        out.lagsMs.push(Math.max(0, at - recorded));
      }
    },
  });
}

/** The page header's inbox count (`inbox.live`, count only), as every open page follows it, until `signal` aborts. */
export function followInboxCount(webUrl: string, cookie: string, signal: AbortSignal, out: Counted & { messages: number }): Promise<void> {
  const input = encodeURIComponent(JSON.stringify({ countOnly: true }));
  return followSse(`${webUrl}/api/trpc/inbox.live?input=${input}`, cookie, "inbox", signal, out, { message: () => out.messages++ });
}

/**
 * The dashboard's reader until `signal` aborts: the sessions list's first page (as the
 * dashboard shows it) every `intervalMs`, each request timed end to end.
 */
export async function readDashboard(
  webUrl: string,
  cookie: string,
  intervalMs: number,
  signal: AbortSignal,
  out: Counted & { listMs: number[] },
): Promise<void> {
  const input = encodeURIComponent(JSON.stringify({}));
  while (!signal.aborted) {
    const t0 = performance.now();
    try {
      const res = await fetch(`${webUrl}/api/trpc/sessions.list?input=${input}`, { headers: { cookie }, signal });
      const body = await res.text();
      if (!res.ok) countError(out, `dashboard_http_${res.status}`);
      else if (!body.includes('"items"')) countError(out, "dashboard_no_items");
      else out.listMs.push(performance.now() - t0);
    } catch (err) {
      if (signal.aborted) break;
      countError(out, `dashboard_${(err as Error).name}`);
    }
    await sleep(intervalMs);
  }
}
