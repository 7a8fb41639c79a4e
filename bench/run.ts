// `npm run bench`: starts its own embedded PostgreSQL (default durability), migrates a
// fresh database, runs each measurement in order (a failing one is reported, the others
// still run), prints the JSON report and writes it to bench/results/latest.json.
// `npm run bench -- --only fork,fork_workspace` runs those measurements only and prints
// their report without writing it (the saved report stays a whole run's).
// `npm run bench -- --scale [--sessions 200,400] [--max-minutes 8] ...` is a separate, longer
// run: many sessions at once (bench/scale/run.ts, docs/scaling.md); it writes
// bench/results/scale-<date>.json and leaves latest.json alone.
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { createPool } from "../server/db/pool";
import { createAppEventStore } from "../server/app-store";
import type { BenchContext, Measurement } from "./lib/context";
import { collectMetadata } from "./lib/metadata";
import { startBenchPostgres } from "./lib/postgres";
import { EMPTY_FIGURES, summaryLines, TARGETS, type BenchReport, type BenchReportFigures } from "./lib/report";
import { parseScaleFlags, scaleSummaryLines } from "./scale/model";
import { runScale } from "./scale/run";
import { appendSinglePeer } from "./measure/append-single-peer";
import { batchAppend } from "./measure/batch-append";
import { concurrentAppends } from "./measure/concurrent-appends";
import { conversationReplay } from "./measure/conversation-replay";
import { conversationTurn } from "./measure/conversation-turn";
import { dashboardList } from "./measure/dashboard-list";
import { fork, forkWorkspace } from "./measure/fork";
import { bakeOffFanout } from "./measure/bake-off";
import { forgePipeline } from "./measure/forge";
import { promptCacheableShare, tokensPerApprovedDemoTask } from "./measure/prompt-share";
import { liveUpdates } from "./measure/live-updates";
import { readAllLag } from "./measure/read-all-lag";
import { pickupVsPeer } from "./measure/pickup-vs-peer";
import { replayReads } from "./measure/replay-reads";
import { runnerPeers } from "./measure/runner-peers";
import { sessionPage } from "./measure/session-page";
import { reviewLoop } from "./measure/review-loop";
import { sandboxOverhead } from "./measure/sandbox-overhead";
import { egressOverhead } from "./measure/egress-overhead";
import { livePaint } from "./measure/live-paint";
import { firstOutput } from "./measure/first-output";
import { langgraph } from "./measure/langgraph";
import { singleAppend } from "./measure/single-append";
import { stepFloor } from "./measure/step-floor";
import { stepPickup } from "./measure/step-pickup";
import { metricsOverhead } from "./measure/metrics-overhead";
import { tracingOverhead } from "./measure/tracing-overhead";

const MEASUREMENTS: Measurement[] = [
  singleAppend,
  batchAppend,
  stepPickup,
  metricsOverhead,
  tracingOverhead,
  fork,
  forkWorkspace,
  bakeOffFanout,
  readAllLag,
  reviewLoop,
  forgePipeline,
  promptCacheableShare,
  tokensPerApprovedDemoTask,
  replayReads,
  dashboardList,
  liveUpdates,
  conversationTurn,
  conversationReplay,
  sessionPage,
  appendSinglePeer,
  concurrentAppends,
  livePaint,
  firstOutput,
  sandboxOverhead,
  egressOverhead,
  pickupVsPeer,
  runnerPeers,
  langgraph,
  // Last: it appends events of types no reader knows, on sessions of its own.
  stepFloor,
];
const RESULTS_FILE = path.resolve(import.meta.dirname, "results", "latest.json");
const { values: cli } = parseArgs({
  options: {
    only: { type: "string" },
    scale: { type: "boolean" },
    sessions: { type: "string" },
    "max-minutes": { type: "string" },
    runners: { type: "string" },
    concurrency: { type: "string" },
    viewers: { type: "string" },
    sleep: { type: "string" },
    seed: { type: "string" },
  },
});
const SCALE_FLAGS = ["sessions", "max-minutes", "runners", "concurrency", "viewers", "sleep", "seed"] as const;
if (!cli.scale && SCALE_FLAGS.some((f) => cli[f] !== undefined)) throw new Error(`--${SCALE_FLAGS.join(", --")} go with --scale`);
if (cli.scale && cli.only) throw new Error("--scale and --only do not go together: --scale is a run of its own");
const ONLY = cli.only ? new Set(cli.only.split(",").map((s) => s.trim())) : null;
if (ONLY) {
  const unknown = [...ONLY].filter((name) => !MEASUREMENTS.some((m) => m.name === name));
  if (unknown.length) throw new Error(`no measurement ${unknown.join(", ")} (known: ${MEASUREMENTS.map((m) => m.name).join(", ")})`);
}

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

async function main(): Promise<void> {
  const started = performance.now();
  const figures: BenchReportFigures = { ...EMPTY_FIGURES };
  const errors: Record<string, string> = {};
  const notes: Record<string, unknown> = {};
  const durations: Record<string, number> = {};
  let meta: Record<string, unknown>;

  log("starting embedded PostgreSQL (default durability)");
  const t0 = performance.now();
  const postgres = await startBenchPostgres((line) => log(line));
  durations.postgres_start_and_migrate = Math.round(performance.now() - t0);
  let interrupted = false;
  const stopPostgres = () => {
    interrupted = true;
    log("interrupted: stopping PostgreSQL; no report is written");
    // Connections die under the measurements now; pg reports that as uncaught 'error' events.
    process.on("uncaughtException", (err) => log(`during shutdown: ${err.message}`));
    void postgres.stop().finally(() => process.exit(130));
  };
  process.once("SIGINT", stopPostgres);
  process.once("SIGTERM", stopPostgres);

  const pool = createPool(postgres.url, 10);
  try {
    meta = await collectMetadata(pool);
    log(`machine: ${String(meta.cpu_model)}, calibration ${String(meta.cpu_calibration_ms)} ms (figures compare beside it)`);
    const ctx: BenchContext = {
      url: postgres.url,
      pool,
      store: createAppEventStore(pool),
      log,
      note: (key, value) => {
        notes[key] = value;
      },
    };
    for (const m of MEASUREMENTS) {
      if (interrupted) return;
      if (ONLY && !ONLY.has(m.name)) continue;
      log(`${m.name}: running`);
      const t = performance.now();
      try {
        const result = await m.run(ctx);
        for (const key of m.keys) (figures as unknown as Record<string, unknown>)[key] = result[key] ?? null;
      } catch (err) {
        errors[m.name] = err instanceof Error ? (err.stack ?? err.message) : String(err);
        log(`${m.name}: FAILED: ${errors[m.name]}`);
      }
      durations[m.name] = Math.round(performance.now() - t);
      log(`${m.name}: ${durations[m.name]} ms`);
    }
  } finally {
    await pool.end().catch(() => {});
    const t = performance.now();
    await postgres.stop().catch((err: unknown) => log(`stopping postgres failed: ${String(err)}`));
    durations.postgres_stop = Math.round(performance.now() - t);
    process.off("SIGINT", stopPostgres);
    process.off("SIGTERM", stopPostgres);
  }
  if (interrupted) return;
  durations.total = Math.round(performance.now() - started);

  const report: BenchReport = { ...figures, targets: TARGETS, errors, meta: { ...meta, durations_ms: durations, notes } };
  const json = JSON.stringify(report, null, 2);
  for (const line of summaryLines(figures)) log(line);
  if (ONLY) log(`--only ${[...ONLY].join(",")}: the report is not written`);
  else {
    fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
    fs.writeFileSync(RESULTS_FILE, `${json}\n`);
    log(`report written to ${path.relative(process.cwd(), RESULTS_FILE)}`);
  }
  process.stdout.write(`${json}\n`);
}

async function scale(): Promise<void> {
  const options = parseScaleFlags(cli);
  log(`--scale: steps N=${options.sessions.join(",")}, budget ${options.maxMinutes} min`);
  const { report, file } = await runScale(options, log);
  for (const line of scaleSummaryLines(report)) log(line);
  log(`report written to ${path.relative(process.cwd(), file)}`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

(cli.scale ? scale() : main()).catch((err: unknown) => {
  log(`benchmark aborted: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
