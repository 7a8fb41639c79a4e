// live_event_to_client_ms: commit → the update received by a subscriber of the session's
// live view (`live.updates`, Server-Sent Events), through the same tRPC fetch handler the
// web route uses, served over HTTP on localhost, read by an HTTP client that parses the
// event stream. Path: NOTIFY after commit → the web process's one LISTEN connection → the
// subscriber wakes → reads the new events → SSE message. For each of N paced appends,
// latency = message received − append resolved (commit acknowledged), both by
// performance.now() in this process. The bare LISTEN hop (commit → notification on a
// web-side listener) is measured beside it and reported in the notes.
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { Readable } from "node:stream";
import { PrismaPg } from "@prisma/adapter-pg";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import pg from "pg";
import { appRouter } from "../../server/api/root";
import type { CurrentUser } from "../../server/auth/request";
import { PrismaClient } from "../../server/db/generated/client";
import { EVENTS_CHANNEL } from "../../server/events/store";
import type { BenchContext, Measurement } from "../lib/context";
import { benchActor, messageEvents } from "../lib/fixtures";
import { percentiles } from "../lib/percentiles";
import { sleep } from "../lib/timing";
import { taskStartedData } from "../lib/task-fixtures";

const SAMPLES = 200;
const PACE_MS = 5;
const RECEIVE_TIMEOUT_MS = 5_000;

const benchViewer: CurrentUser = { id: crypto.randomUUID(), email: "bench@cats.test", name: "Bench", role: "viewer", via: "token" };

/** The tRPC API on a local HTTP server, authenticated as a bench viewer. */
async function serveApi(ctx: BenchContext, prisma: PrismaClient): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const request = new Request(`http://localhost${req.url}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      signal: abort.signal,
    });
    void fetchRequestHandler({
      endpoint: "/api/trpc",
      req: request,
      router: appRouter,
      // The subscription asks again, before each batch, whom the credentials name (a revoked
      // token ends the stream): here it is always the bench viewer, who has no users row.
      createContext: () => ({ prisma, pool: ctx.pool, store: ctx.store, user: benchViewer, principal: async () => benchViewer }),
    }).then((response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (!response.body) return res.end();
      Readable.fromWeb(response.body as import("node:stream/web").ReadableStream)
        .on("error", () => res.destroy())
        .pipe(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The largest `version` number anywhere in an SSE message's JSON (the batch's version). */
function versionIn(value: unknown): number | null {
  if (value === null || typeof value !== "object") return null;
  const own = (value as { version?: unknown }).version;
  if (typeof own === "number") return own;
  for (const v of Object.values(value)) {
    const found = versionIn(v);
    if (found !== null) return found;
  }
  return null;
}

/** Follows the SSE stream; calls `onVersion` with the time each batch arrived. */
async function followSse(url: string, signal: AbortSignal, onVersion: (version: number, at: number) => void): Promise<void> {
  const res = await fetch(url, { headers: { accept: "text/event-stream" }, signal });
  if (!res.ok || !res.body) throw new Error(`live.updates answered HTTP ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const at = performance.now();
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = message
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .join("\n");
        if (!data) continue;
        try {
          const version = versionIn(JSON.parse(data));
          if (version !== null) onVersion(version, at);
        } catch {
          // not JSON (a ping): ignore
        }
      }
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

async function measureSse(ctx: BenchContext): Promise<{ lags: number[]; beforeCommitReply: number }> {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: ctx.url, max: 3 }) });
  const api = await serveApi(ctx, prisma);
  const abort = new AbortController();
  try {
    const sessionId = `bench-live-${crypto.randomUUID()}`;
    let version = (
      await ctx.store.append(
        sessionId,
        "no_stream",
        [
          { type: "SessionCreated", data: { title: "Live bench", workflow: "review_loop", state: "start" } },
          { type: "TaskStarted", data: taskStartedData("bench-live", "Watch me") },
        ],
        { actor: benchActor },
      )
    ).version;
    const received = new Map<number, number>();
    let waiter: { version: number; resolve: () => void } | null = null;
    const following = followSse(
      `${api.url}/api/trpc/live.updates?input=${encodeURIComponent(JSON.stringify({ sessionId, afterVersion: version }))}`,
      abort.signal,
      (v, at) => {
        if (!received.has(v)) received.set(v, at);
        if (waiter && v >= waiter.version) waiter.resolve();
      },
    );
    following.catch(() => {});
    // The first batch comes at once: the subscriber is in sync and listening.
    const deadline = performance.now() + RECEIVE_TIMEOUT_MS;
    while (!received.has(version)) {
      if (performance.now() > deadline) throw new Error(`no first batch from live.updates within ${RECEIVE_TIMEOUT_MS} ms`);
      await Promise.race([following, sleep(5)]);
    }
    const lags: number[] = [];
    let beforeCommitReply = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const target = version + 1;
      const arrived = new Promise<void>((resolve, reject) => {
        waiter = { version: target, resolve };
        setTimeout(
          () => reject(new Error(`no live update for version ${target} within ${RECEIVE_TIMEOUT_MS} ms`)),
          RECEIVE_TIMEOUT_MS,
        ).unref();
      });
      arrived.catch(() => {});
      version = (await ctx.store.append(sessionId, version, messageEvents(1, "live"), { actor: benchActor })).version;
      const committed = performance.now();
      if (!received.has(target)) await arrived;
      const at = received.get(target)!;
      if (at < committed) beforeCommitReply++;
      lags.push(Math.max(0, at - committed));
      waiter = null;
      await sleep(PACE_MS);
    }
    return { lags, beforeCommitReply };
  } finally {
    abort.abort();
    await api.close();
    await prisma.$disconnect();
  }
}

/** Commit → NOTIFY received by a dedicated LISTEN connection (the hop under the SSE path). */
async function measureListen(ctx: BenchContext): Promise<number[]> {
  const client = new pg.Client({ connectionString: ctx.url });
  await client.connect();
  const seen = new Map<string, number>();
  client.on("notification", (n) => {
    if (n.payload && !seen.has(n.payload)) seen.set(n.payload, performance.now());
  });
  await client.query(`LISTEN ${EVENTS_CHANNEL}`);
  try {
    const lags: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const streamId = `bench-listen-${crypto.randomUUID()}`;
      // Watched, as a web process declares it: appends to streams nobody watches ring no one.
      await ctx.pool.query(
        "INSERT INTO live_interest (stream_id, listener_id, expires_at) VALUES ($1, 'bench', now() + interval '1 minute')",
        [streamId],
      );
      await ctx.store.append(
        streamId,
        "no_stream",
        [{ type: "SessionCreated", data: { title: "listen", workflow: "bench", state: "open" } }],
        { actor: benchActor },
      );
      const committed = performance.now();
      const deadline = committed + RECEIVE_TIMEOUT_MS;
      while (!seen.has(streamId)) {
        if (performance.now() > deadline) throw new Error("no NOTIFY within the timeout");
        await sleep(0);
      }
      lags.push(Math.max(0, seen.get(streamId)! - committed));
      await sleep(PACE_MS);
    }
    return lags;
  } finally {
    await client.end();
  }
}

export const liveUpdates: Measurement = {
  name: "live_updates",
  keys: ["live_event_to_client_ms"],
  async run(ctx) {
    const listen = percentiles(await measureListen(ctx));
    const sse = await measureSse(ctx);
    const s = percentiles(sse.lags);
    ctx.note("live_updates", {
      path: "append commit → NOTIFY → web LISTEN connection → live.updates subscriber reads new events → SSE over HTTP (localhost) → client parsed the message",
      samples: SAMPLES,
      pace_ms: PACE_MS,
      sse: s,
      seen_before_commit_reply: sse.beforeCommitReply,
      listen_only: listen,
    });
    return { live_event_to_client_ms: { p95: s.p95, p50: s.p50, n: s.n, max: s.max, listen_only_p95: listen.p95 } };
  },
};
