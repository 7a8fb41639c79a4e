// One worker process of the runner comparison, started by ./worker-fleet.ts with an IPC
// channel: `node --import tsx bench/peers/worker-process.ts <catcafe|graphile_worker> <url>
// <concurrency>`. It loads everything and opens its pool, says "ready", then starts and
// stops its consumer (a Cat Cafe Runner, or a graphile-worker pool) when told, and reports
// how many steps it finished (committed) since it started, every few ms while that grows.
// It exits when told to or as soon as its parent goes away.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { Runner } from "../../server/runner/runner";
import { chainReactor, NOOP_KIND, noopExecutor } from "./catcafe-steps";
import { GRAPHILE_NOOP_TASK, noopTask, startGraphileWorker } from "./graphile-worker";

export type WorkerSystem = "catcafe" | "graphile_worker";
export type ToWorker = { type: "start" } | { type: "stop" } | { type: "exit" };
export type FromWorker =
  { type: "ready" } | { type: "started" } | { type: "stopped" } | { type: "done"; count: number } | { type: "error"; message: string };

const REPORT_EVERY_MS = 5;

interface Consumer {
  stop(): Promise<void>;
}

const [system, url, concurrencyArg] = process.argv.slice(2) as [WorkerSystem, string, string];
const concurrency = Number(concurrencyArg);
if ((system !== "catcafe" && system !== "graphile_worker") || !url || !(concurrency > 0)) {
  throw new Error("usage: worker-process.ts <catcafe|graphile_worker> <url> <concurrency>");
}
const send = (msg: FromWorker) => process.send?.(msg);
// As the runner process sizes its pool (server/runner/main.ts); graphile-worker gets the same.
const pool = createPool(url, concurrency + 4, { applicationName: `bench-${system}` });
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-runner-"));
let finished = 0;
let reported = 0;
let consumer: Consumer | null = null;

async function startCatcafe(): Promise<Consumer> {
  const runner = new Runner(createAppEventStore(pool), pool, url, {
    id: `bench-peer-${process.pid}-${crypto.randomBytes(3).toString("hex")}`,
    executors: { [NOOP_KIND]: noopExecutor },
    concurrency,
    react: chainReactor,
    stateDir,
    // Logged right after the outcome's COMMIT.
    log: (msg, fields) => {
      if (msg === "step completed") finished++;
      else if (msg.includes("error") || msg.includes("failed"))
        process.stderr.write(`[worker ${process.pid}] ${msg} ${JSON.stringify(fields)}\n`);
    },
  });
  await runner.start();
  return { stop: () => runner.stop() };
}

async function startGraphile(): Promise<Consumer> {
  const runner = await startGraphileWorker(pool, concurrency, { [GRAPHILE_NOOP_TASK]: noopTask });
  // Emitted once completeJob has been sent (not awaited by graphile-worker): the parent
  // checks the queue itself before it stops the clock.
  runner.events.on("job:complete", () => {
    finished++;
  });
  return { stop: () => runner.stop() };
}

async function handle(msg: ToWorker): Promise<void> {
  switch (msg.type) {
    case "start":
      consumer = system === "catcafe" ? await startCatcafe() : await startGraphile();
      send({ type: "started" });
      break;
    case "stop":
      await consumer?.stop();
      consumer = null;
      send({ type: "stopped" });
      break;
    case "exit":
      await shutdown(0);
  }
}

async function shutdown(code: number): Promise<never> {
  await consumer?.stop().catch(() => {});
  await pool.end().catch(() => {});
  fs.rmSync(stateDir, { recursive: true, force: true });
  process.exit(code);
}

process.on("message", (msg: ToWorker) => {
  handle(msg).catch((err: unknown) => send({ type: "error", message: err instanceof Error ? (err.stack ?? err.message) : String(err) }));
});
process.on("disconnect", () => void shutdown(1));
setInterval(() => {
  if (finished === reported) return;
  reported = finished;
  send({ type: "done", count: finished });
}, REPORT_EVERY_MS);

// Open a connection now, so that the first measured step does not pay for it.
await pool.query("SELECT 1");
send({ type: "ready" });
