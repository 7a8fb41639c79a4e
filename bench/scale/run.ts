// `npm run bench -- --scale` (docs/scaling.md, "Many sessions at once (`--scale`)"): a
// separate, longer run than the default bench. Its own embedded PostgreSQL (default
// durability, max_connections sized to the pools below), the production web server
// (`next start`), `--runners` runner processes (server/runner/main.ts, as production runs
// them, sandbox as they default to) on the demo repository, and per step of N:
//   - N review-loop sessions in implementation mode started at once (8 callers of startTask):
//     the coder is a command agent that reads its prompt, sleeps the seconds the prompt names
//     (seeded, in [--sleep]), and writes the demo's fix; a scripted reviewer approves, a
//     scripted tester plans `node --test test/`, which runs in the sandbox;
//   - `--viewers` SSE viewers on those sessions' live view (`live.updates`), signed in over
//     HTTP, each entry's lag from its recorded_at to its arrival; each also follows the page
//     header's inbox count (`inbox.live`), as an open page does, and the web process's reads
//     of that count are counted (pg_stat_statements);
//   - one dashboard reader: the sessions list's first page through tRPC every second;
//   - every second: VmRSS of the runner processes and of every process under them, the agent
//     trees in flight, steps running, pg_stat_activity rows; CPU per process group over the step.
// A step ends when all its sessions finished (or its timeout: the rest count as errors and
// are cancelled). No next step starts when the time budget (--max-minutes) would be passed.
// Figures, knee and limits: ./model.ts. The report: bench/results/scale-<date>.json.
import crypto from "node:crypto";
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { DEMO_ALLOWLIST, DEMO_FIXED_SOURCE, DEMO_TEST_ARGV } from "../../server/demo/content";
import { ensureDemoRepo } from "../../server/demo/repo";
import { upsertProject } from "../../server/projects/projects";
import { sandboxStatus } from "../../server/process/sandbox";
import { cancelTask, startTask } from "../../server/tasks/commands";
import { benchActor } from "../lib/fixtures";
import { collectMetadata } from "../lib/metadata";
import { PgCounters } from "../lib/pg-counters";
import { startBenchPostgres } from "../lib/postgres";
import { sleep } from "../lib/timing";
import { startRunnerProcess } from "../lib/runner-process";
import { createOperator, ensureBuild, startWeb } from "../lib/web-app";
import { countError, followInboxCount, followLive, readDashboard, signInOverHttp } from "./clients";
import {
  coderSleeps,
  reportFileName,
  scaleReport,
  scaleSummaryLines,
  stepFigures,
  type ResourceSample,
  type ScaleOptions,
  type ScaleReport,
  type StepFigures,
} from "./model";
import { descendants, machineCpu, ownCpuMs, processTable, rssKb, treeCpuMs } from "./procs";

const PROJECT_ID = "bench-scale";
const START_CALLERS = 8;
const SAMPLE_MS = 1_000;
const DASHBOARD_POLL_MS = 1_000;
const RUNNERS_READY_MS = 60_000;
const DRAIN_MS = 30_000;
/** The web server's pool (CATCAFE_WEB_POOL_MAX's default), the harness's own, and room for psql. */
const WEB_POOL = 20;
const HARNESS_POOL = 12;

const RESULTS_DIR = path.resolve(import.meta.dirname, "..", "results");

/** The stand-in coder: reads its prompt, sleeps what it names (`scale-sleep=<s>`), writes the fix. */
function coderArgv(): string[] {
  const fix = Buffer.from(DEMO_FIXED_SOURCE).toString("base64");
  const script = [
    `p=$(cat)`,
    `s=$(printf '%s' "$p" | sed -n 's/.*scale-sleep=\\([0-9.]*\\).*/\\1/p' | head -n 1)`,
    `echo "coding for \${s:-1} s"`,
    `sleep "\${s:-1}"`,
    `printf '%s' '${fix}' | base64 -d > src/slugify.js`,
    `echo "fixed src/slugify.js"`,
  ].join("\n");
  return ["sh", "-c", script];
}

interface Runners {
  children: ChildProcess[];
  exits: number;
  stop(): Promise<void>;
}

function startRunners(url: string, root: string, options: ScaleOptions, log: (line: string) => void): Runners {
  const run = crypto.randomBytes(3).toString("hex");
  let stopping = false;
  const started = Array.from({ length: options.runners }, (_, i) =>
    startRunnerProcess(url, root, `scale-${run}-${i}`, log, { CATCAFE_RUNNER_CONCURRENCY: String(options.concurrency) }),
  );
  const state: Runners = {
    children: started.map((r) => r.child),
    exits: 0,
    stop: async () => {
      stopping = true;
      await Promise.all(started.map((r) => r.stop()));
    },
  };
  started.forEach(({ child }, i) =>
    child.once("exit", (code, signal) => {
      if (!stopping) {
        state.exits++;
        log(`runner ${i} exited (${code ?? signal})`);
      }
    }),
  );
  return state;
}

interface Processes {
  web: number;
  runners: number[];
  postmaster: number;
}

/** CPU (ms) of each process group now: web, runners (their own), agents (under the runners), postgres, the harness. */
function cpuNow(p: Processes): Record<string, number> {
  const table = processTable();
  const runnersOwn = p.runners.reduce((s, pid) => s + ownCpuMs(table, pid), 0);
  const runnersTree = p.runners.reduce((s, pid) => s + treeCpuMs(table, pid), 0);
  const own = process.cpuUsage();
  return {
    web: treeCpuMs(table, p.web),
    // A runner's own threads; what it ran (live under it, or reaped by it): the agents' sandboxes and its git commands.
    runners: runnersOwn,
    runner_children: runnersTree - runnersOwn,
    postgres: treeCpuMs(table, p.postmaster),
    harness: (own.user + own.system) / 1000,
  };
}

function sampleResources(p: Processes): Omit<ResourceSample, "runningSteps" | "dbConnections"> {
  const table = processTable();
  let runnerRssKb = 0;
  let agentRssKb = 0;
  let agentTrees = 0;
  for (const pid of p.runners) {
    runnerRssKb += rssKb(pid);
    for (const d of descendants(table, pid)) agentRssKb += rssKb(d);
    // The runner's children: the agents' sandboxes (the short git commands it runs beside them are not agents).
    for (const e of table.values()) if (e.ppid === pid && e.comm !== "git") agentTrees++;
  }
  return { runnerRssKb, agentRssKb, agentTrees };
}

export async function runScale(options: ScaleOptions, log: (line: string) => void): Promise<{ report: ScaleReport; file: string }> {
  const started = performance.now();
  const budgetMs = options.maxMinutes * 60_000;
  ensureBuild((line) => log(`scale: ${line}`));
  const slots = options.runners * options.concurrency;
  const maxConnections = Math.max(100, options.runners * (options.concurrency + 4) + WEB_POOL + HARNESS_POOL + 20);
  log(`starting embedded PostgreSQL (default durability, max_connections ${maxConnections})`);
  const postgres = await startBenchPostgres(log, { max_connections: String(maxConnections) });
  // Statements counted from here on (connections opened later): the inbox count's reads.
  const counters = await PgCounters.open(postgres.url);
  const pool = createPool(postgres.url, HARNESS_POOL);
  const store = createAppEventStore(pool);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-scale-"));
  const sandbox = sandboxStatus(process.env);
  let web: Awaited<ReturnType<typeof startWeb>> | null = null;
  let runners: Runners | null = null;
  // Ctrl-C or a kill: the runners, the web server and PostgreSQL go with the harness, no report.
  // The viewers are closed first (the web server waits for open streams before it exits).
  let stepAbort: AbortController | null = null;
  let stopping = false;
  const interrupted = (signal: NodeJS.Signals) => {
    stopping = true;
    log(`scale: ${signal}: stopping the runners, the web server and PostgreSQL; no report is written`);
    process.on("uncaughtException", (err) => log(`during shutdown: ${err.message}`));
    stepAbort?.abort();
    const webStopped = web ? Promise.race([web.stop(), sleep(10_000).then(() => web?.child.kill("SIGKILL"))]) : null;
    void Promise.allSettled([runners?.stop(), webStopped])
      .then(() => postgres.stop())
      .finally(() => {
        fs.rmSync(root, { recursive: true, force: true });
        process.exit(130);
      });
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  const steps: StepFigures[] = [];
  const skipped: ScaleReport["skipped"] = [];
  const stepNotes: Record<string, unknown>[] = [];
  let meta: Record<string, unknown> = {};
  try {
    meta = await collectMetadata(pool);
    const repo = await ensureDemoRepo(root);
    await upsertProject(pool, {
      id: PROJECT_ID,
      name: "bench: many sessions at once",
      repoPath: repo.path,
      allowlist: DEMO_ALLOWLIST,
      agents: {
        coder: { kind: "command", id: "coder-sleeps", argv: coderArgv() },
        reviewer: {
          kind: "scripted",
          id: "reviewer-scale",
          responses: [{ reply: JSON.stringify({ decision: "approve", summary: "Fine.", findings: [] }) }],
        },
        tester: {
          kind: "scripted",
          id: "tester-scale",
          responses: [{ reply: JSON.stringify({ summary: "Run the unit tests.", commands: [{ argv: DEMO_TEST_ARGV }] }) }],
        },
      },
    });
    const operator = await createOperator(postgres.url);
    web = await startWeb(postgres.url);
    const cookie = await signInOverHttp(web.url, operator);
    runners = startRunners(postgres.url, root, options, log);
    const ids = runners.children.map((c) => c.pid!);
    const waitStart = performance.now();
    for (;;) {
      const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runners WHERE pid = ANY($1)", [ids]);
      if (rows[0]!.n >= options.runners) break;
      if (performance.now() - waitStart > RUNNERS_READY_MS) throw new Error(`only ${rows[0]!.n} of ${options.runners} runners registered`);
      await sleep(200);
    }
    const postmaster = Number(fs.readFileSync(path.join(postgres.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    const procs: Processes = { web: web.child.pid!, runners: ids, postmaster };
    log(
      `scale: ${options.runners} runners x ${options.concurrency} slots, web at ${web.url}, sandbox ${sandbox.available ? "bubblewrap" : "none"}`,
    );

    for (const [index, n] of options.sessions.entries()) {
      const elapsed = performance.now() - started;
      const last = steps.at(-1);
      const predicted = last ? (last.duration_s * 1000 * n) / last.sessions : 0;
      if (elapsed + predicted > budgetMs) {
        const reason = `time budget: ${Math.round(elapsed / 1000)} s spent, about ${Math.round(predicted / 1000)} s more predicted, budget ${options.maxMinutes} min`;
        for (const rest of options.sessions.slice(index)) skipped.push({ sessions: rest, reason });
        log(`scale: stopping before N=${n} (${reason})`);
        break;
      }
      // A step may take what is left of the budget (a minute at least): what has not finished by then is counted and cancelled.
      const timeoutMs = Math.max(60_000, budgetMs - elapsed);
      const { figures, notes } = await runStep(n, index, timeoutMs);
      steps.push(figures);
      stepNotes.push(notes);
      log(scaleSummaryLines(scaleReport(options, [figures], [], {})).at(0)!);
    }
    return finish();

    async function runStep(n: number, index: number, timeoutMs: number) {
      log(`scale: N=${n}: starting ${n} sessions (at most ${Math.round(timeoutMs / 1000)} s, the budget left)`);
      const errors: Record<string, number> = {};
      const counted = { errors };
      const sleeps = coderSleeps(n, options.seed + index, options.sleepMin, options.sleepMax);
      await pool.query("VACUUM ANALYZE sessions, steps, events");
      const idle = sampleResources(procs);
      const cpu0 = cpuNow(procs);
      const m0 = machineCpu();
      const samples: ResourceSample[] = [];
      const abort = new AbortController();
      stepAbort = abort;
      const sampler = (async () => {
        while (!abort.signal.aborted) {
          const r = sampleResources(procs);
          const { rows } = await pool.query<{ running: number; conns: number }>(
            `SELECT (SELECT count(*)::int FROM steps WHERE state = 'running') AS running,
                    (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS conns`,
          );
          samples.push({ ...r, runningSteps: rows[0]!.running, dbConnections: rows[0]!.conns });
          await sleep(SAMPLE_MS);
        }
      })();
      const dashboard = { errors, listMs: [] as number[] };
      const reader = readDashboard(web!.url, cookie, DASHBOARD_POLL_MS, abort.signal, dashboard);
      await counters.connection.query("SELECT pg_stat_statements_reset()");

      const t0 = performance.now();
      const sessions: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: START_CALLERS }, async () => {
          for (let i = next++; i < n; i = next++) {
            try {
              const { sessionId } = await startTask(
                { store, pool },
                { projectId: PROJECT_ID, prompt: `Fix slugify() (scale N=${n} #${i}), scale-sleep=${sleeps[i]}`, mode: "implementation" },
                benchActor,
              );
              sessions.push(sessionId);
            } catch (err) {
              countError(counted, `start_task_${(err as { code?: string }).code ?? "error"}`);
              log(`scale: startTask failed: ${String(err)}`);
            }
          }
        }),
      );
      const startMs = performance.now() - t0;
      // The viewers, spread over the sessions, each from the session's version now.
      const live = { errors, lagsMs: [] as number[] };
      const header = { errors, messages: 0 };
      const viewers: Promise<void>[] = [];
      for (let v = 0; v < options.viewers && sessions.length; v++) {
        const id = sessions[Math.floor((v * sessions.length) / options.viewers)]!;
        const { rows } = await pool.query<{ version: number }>("SELECT version FROM streams WHERE id = $1", [id]);
        viewers.push(followLive(web!.url, cookie, id, Number(rows[0]?.version ?? 0), abort.signal, live));
        viewers.push(followInboxCount(web!.url, cookie, abort.signal, header));
      }
      let unfinished: number;
      for (;;) {
        const { rows } = await pool.query<{ left: number }>(
          "SELECT count(*) FILTER (WHERE outcome IS NULL)::int AS left FROM sessions WHERE id = ANY($1)",
          [sessions],
        );
        unfinished = rows[0]!.left;
        if (unfinished === 0 || performance.now() - t0 > timeoutMs) break;
        await sleep(500);
      }
      const durationMs = performance.now() - t0;
      const { rows: inboxReads } = await counters.connection.query<{ calls: number }>(
        `SELECT coalesce(sum(calls), 0)::int AS calls FROM pg_stat_statements
          WHERE query LIKE 'SELECT count(*) AS n FROM sessions WHERE attention IS NOT NULL%'`,
      );
      abort.abort();
      await Promise.all([sampler, reader, ...viewers].map((p) => p.catch(() => {})));
      const cpu1 = cpuNow(procs);
      const m1 = machineCpu();
      if (unfinished > 0) {
        errors.session_unfinished_at_budget = unfinished;
        log(
          `scale: N=${n}: ${unfinished} sessions unfinished when the budget ran out (${Math.round(durationMs / 1000)} s): cancelling them`,
        );
      }
      if (runners!.exits > 0) errors.runner_exited = runners!.exits;

      const { rows: pickups } = await pool.query<{ ms: number }>(
        `SELECT extract(epoch FROM (st.recorded_at - greatest(s.recorded_at, (s.data->>'availableAt')::timestamptz))) * 1000 AS ms
           FROM events s
           JOIN events st ON st.stream_id = s.stream_id AND st.type = 'StepStarted'
                         AND st.data->>'stepId' = coalesce(s.data->>'stepId', s.data->>'id')
                         AND coalesce((st.data->>'attempt')::int, 1) = 1
          WHERE s.type = 'StepScheduled' AND s.stream_id = ANY($1)`,
        [sessions],
      );
      const { rows: outcomes } = await pool.query<{ outcome: string; n: number }>(
        "SELECT outcome, count(*)::int AS n FROM sessions WHERE id = ANY($1) AND outcome IS NOT NULL GROUP BY outcome",
        [sessions],
      );
      const { rows: stepRows } = await pool.query<{ finished: number; failures: Array<{ cls: string; n: number }> | null }>(
        `SELECT (SELECT count(*)::int FROM steps WHERE session_id = ANY($1) AND finished_at IS NOT NULL) AS finished,
                (SELECT json_agg(json_build_object('cls', error_class, 'n', n)) FROM
                   (SELECT error_class, count(*)::int AS n FROM steps
                     WHERE session_id = ANY($1) AND error_class IS NOT NULL GROUP BY error_class) f) AS failures`,
        [sessions],
      );
      for (const o of outcomes) if (o.outcome !== "approved") errors[`session_${o.outcome}`] = o.n;
      for (const f of stepRows[0]!.failures ?? []) errors[`step_${f.cls}`] = f.n;
      const { rows: maxConn } = await pool.query<{ max: number }>(
        "SELECT setting::int AS max FROM pg_settings WHERE name = 'max_connections'",
      );
      const figures = stepFigures({
        sessions: n,
        slots,
        durationMs,
        startAllMs: startMs,
        completedSessions: sessions.length - unfinished,
        approvedSessions: outcomes.find((o) => o.outcome === "approved")?.n ?? 0,
        stepsFinished: stepRows[0]!.finished,
        pickupMs: pickups.map((r) => Math.max(0, Number(r.ms))),
        sseLagMs: live.lagsMs,
        dashboardListMs: dashboard.listMs,
        inboxCountReads: inboxReads[0]!.calls,
        inboxCountStreams: viewers.length / 2,
        errors,
        samples,
        idleRunnerRssKb: idle.runnerRssKb + idle.agentRssKb,
        cpuMs: Object.fromEntries(Object.entries(cpu1).map(([k, v]) => [k, v - (cpu0[k] ?? 0)])),
        cores: m1.cores,
        machineBusy: m1.total > m0.total ? (m1.busy - m0.busy) / (m1.total - m0.total) : 0,
        maxConnections: maxConn[0]!.max,
      });
      // Whatever is left is cancelled, and the runners drained, before the next step.
      for (const id of sessions)
        await cancelTask({ store, pool }, { sessionId: id, reason: "bench: scale step over" }, benchActor).catch(() => {});
      const drainStart = performance.now();
      while (performance.now() - drainStart < DRAIN_MS) {
        const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM steps WHERE state = 'running'");
        if (rows[0]!.n === 0) break;
        await sleep(500);
      }
      const notes = {
        sessions: n,
        start_all_ms: Math.round(startMs),
        sleeps_s: { min: Math.min(...sleeps), max: Math.max(...sleeps), mean: sleeps.reduce((a, b) => a + b, 0) / sleeps.length },
        samples: samples.length,
        load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
        viewers: viewers.length / 2,
        inbox_count_messages: header.messages,
        dashboard_reads: dashboard.listMs.length,
      };
      return { figures, notes };
    }

    function finish() {
      const report = scaleReport(options, steps, skipped, {
        ...meta,
        started_at: new Date(Date.now() - (performance.now() - started)).toISOString(),
        duration_s: Math.round((performance.now() - started) / 1000),
        sandbox: sandbox.available ? "bubblewrap" : `none: ${sandbox.reason ?? "unavailable"}`,
        slots,
        max_connections: maxConnections,
        load_average_at_end: os.loadavg().map((x) => Math.round(x * 100) / 100),
        steps: stepNotes,
        measured: {
          pickup:
            "recorded_at of each step's StepStarted (first attempt) − its StepScheduled's (or its availableAt, when later), every step of the step's sessions",
          sse_lag:
            "an entry's recordedAt (its appending transaction's start) → its SSE message parsed by a viewer, entries recorded after the viewer's stream opened",
          dashboard_list: "GET /api/trpc/sessions.list (first page) end to end, signed in, once a second",
          inbox_count:
            "streams: each viewer's inbox.live (count only), as every open page's header follows it; reads_per_s: the web process's count query (pg_stat_statements calls) over the step, per second",
          runner_rss:
            "VmRSS of the runner processes and of every process under them (the agents' sandboxes), sampled each second; per agent: at the sample with most agents in flight, (that total − the idle runners') / agents in flight",
          db_connections: "rows of pg_stat_activity with backend_type 'client backend', sampled each second",
          cpu_pct:
            "utime+stime (with reaped children) per group over the step, in % of one core; machine_busy_pct: /proc/stat over all cores",
        },
      });
      const file = path.join(RESULTS_DIR, reportFileName(new Date()));
      fs.mkdirSync(RESULTS_DIR, { recursive: true });
      fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
      return { report, file };
    }
  } catch (err) {
    // Stopping on a signal: what fails as the servers go down is no news; the handler exits.
    if (stopping) return new Promise<never>(() => {});
    throw err;
  } finally {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
    await runners?.stop().catch(() => {});
    await web?.stop().catch(() => {});
    await pool.end().catch(() => {});
    await counters.close();
    await postgres.stop().catch((err: unknown) => log(`stopping postgres failed: ${String(err)}`));
    fs.rmSync(root, { recursive: true, force: true });
  }
}
