// `npm run chaos`: the fault harness. Bounded in time, loopback only, and it stops what it
// started. It runs a private embedded PostgreSQL, a project whose tester runs a real
// `node --test`, and several real runner processes (server/runner/main.ts), then:
//
//   kills      runners killed with SIGKILL at random moments (and started again) while
//              sessions run, until --kills kills (default 100); every third session is a
//              Forge pipeline (idea to delivery, no gates), the others review loops
//              (so too in database and partition)
//   database   PostgreSQL killed with SIGKILL mid-run and started again
//   partition  a runner cut off from the database (a TCP proxy) for longer than its lease
//   confirms   50 confirms of one session at once
//   races      confirm racing cancel on 20 sessions
//   resumes    builds cancelled mid-way, then two resumes of each at once
//   conversations  conversations in every collaboration mode while runners are killed at
//              random moments and PostgreSQL once, each audited after (its events exactly
//              what its mode decided: server/conversations/audit.ts)
//   hosts      two runner hosts (each its own clone of a shared bare remote, mapped with
//              CATCAFE_REPOSITORY_PATHS, its own workspaces and state) while their runners
//              are killed at random: sessions hop between hosts; after, every session's
//              `catcafe/<id>` on the remote must point at the session's head (docs/scaling.md)
//   bake-off   bake-offs of three contenders (forked at one confirm) while runners are killed
//              at random: every contender ends approved, no step runs or completes twice; then
//              a pick each: the parent ends winner_chosen, the others not_chosen (docs/bake-off.md)
//
// In kills, every fourth session is a fork of a finished one (at a random event), a revert or
// a modify, killed like the others.
//
// Figures per scenario: sessions, steps, stuck sessions (not finished once the run settled),
// double executions (two runs of one session's test command at the same time, seen by the
// test itself through a pid file: the agents' own side-effect log), acknowledged writes lost,
// and the time to settle. Written to bench/results/chaos.json. Goal: every figure of harm 0.
//
//   npm run chaos                 everything
//   npm run chaos -- --quick      fewer sessions and kills (a smoke run)
//   npm run chaos -- --only kills one scenario
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createAppEventStore } from "../server/app-store";
import { createPool } from "../server/db/pool";
import { startEmbeddedPostgres, type RunningPostgres } from "../server/db/embedded";
import { migrate } from "../server/db/migrate";
import { isAppError } from "../server/errors";
import type { EventStore } from "../server/events/store";
import { freePort } from "../server/net/free-port";
import { upsertProject } from "../server/projects/projects";
import { FORGE_DEMO_IDEA, FORGE_DEMO_SCRIPTS, instantScripts } from "../server/demo/forge-content";
import { releaseOrphanedLease } from "../server/runner/liveness";
import { cancelTask, confirmTask, startTask } from "../server/tasks/commands";
import { pickWinner } from "../server/bake-off/pick";
import { forkSession, modifySession, revertSession } from "../server/tasks/fork";
import { resumeSession } from "../server/tasks/resume";
import { newForge } from "../server/tasks/forge";
import { foldTask } from "../server/task-engine";
import { startTcpProxy } from "../test/helpers/tcp-proxy";
import { auditConversation } from "../server/conversations/audit";
import { postMessage, startConversation } from "../server/conversations/service";

const ROOT = path.resolve(import.meta.dirname, "..");
const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    kills: { type: "string" },
    out: { type: "string", default: path.join(ROOT, "bench/results/chaos.json") },
  },
});
const QUICK = args.quick;
const KILLS = Number(args.kills ?? (QUICK ? 20 : 100));
const RUNNERS = 3;
const LEASE_MS = 1_500;
const SETTLE_MS = 90_000;
const actor = { kind: "user", id: "chaos" } as const;
const say = (line: string) => console.log(`[chaos] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Figures {
  scenario: string;
  sessions: number;
  steps: number;
  stuck: number;
  doubleExecutions: number;
  writesLost: number;
  settleMs: number;
  [extra: string]: number | string;
}

// --- the world: PostgreSQL, a project, runners ----------------------------------------------

const work = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-chaos-"));
const stateDir = path.join(work, "runners");
const workspaces = path.join(work, "workspaces");
let pgServer: RunningPostgres;
let pgPort = 0;
const pgPassword = crypto.randomBytes(12).toString("hex");
const runners = new Map<string, ChildProcess>();
let runnerSeq = 0;

async function startPostgres(): Promise<void> {
  pgServer = await startEmbeddedPostgres({
    dataDir: path.join(work, "pg"),
    port: pgPort,
    password: pgPassword,
    settings: { fsync: "off" },
  });
}

/**
 * The tester's test: records its run in the session's worktree (`.chaos/`, ignored by git, so
 * it survives the reset between attempts; the only place a sandboxed test may write) and
 * notices a second run of the same session at the same time: a running test touches
 * `.chaos/running` every 50 ms, so a fresh one at start means another run is live.
 */
function slowTest(): string {
  return `const fs = require("node:fs");
const path = require("node:path");
const dir = path.join(process.cwd(), ".chaos");
fs.mkdirSync(dir, { recursive: true });
const running = path.join(dir, "running");
const log = (what) => fs.appendFileSync(path.join(dir, "log"), what + " " + Date.now() + "\\n");
try { if (Date.now() - fs.statSync(running).mtimeMs < 300) log("overlap"); } catch {}
const beat = () => fs.writeFileSync(running, String(Date.now()));
beat();
const timer = setInterval(beat, 50);
timer.unref();
log("start");
require("node:test")("takes a while", async () => { await new Promise((r) => setTimeout(r, 400 + Math.random() * 800)); });
process.on("exit", () => { clearInterval(timer); try { fs.rmSync(running); } catch {} log("done"); });
`;
}

function makeRepo(): string {
  const repo = path.join(work, "project");
  fs.mkdirSync(path.join(repo, "src"), { recursive: true });
  fs.mkdirSync(path.join(repo, "test"), { recursive: true });
  fs.writeFileSync(path.join(repo, "src/sum.js"), "module.exports = { sum: (a, b) => a - b };\n");
  fs.writeFileSync(path.join(repo, "test/slow.test.js"), slowTest());
  fs.writeFileSync(path.join(repo, ".gitignore"), ".chaos/\n");
  const git = (...a: string[]) =>
    spawnSyncOk("git", ["-c", "user.name=chaos", "-c", "user.email=chaos@localhost", "-c", "commit.gpgsign=false", ...a], repo);
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  return repo;
}

function spawnSyncOk(file: string, argv: string[], cwd: string): void {
  const r = spawnSync(file, argv, { cwd, stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${file} ${argv.join(" ")} failed`);
}

/** A runner host of the hosts scenario: its own clone, workspaces and state, its name. */
interface Host {
  name: string;
  workspaces: string;
  stateDir: string;
  /** CATCAFE_REPOSITORY_PATHS: the registered repository → this host's clone. */
  repositoryPaths: Record<string, string>;
}

function startRunner(databaseUrl: string, host?: Host): string {
  const id = `chaos-${host ? `${host.name}-` : ""}${++runnerSeq}`;
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "server/runner/main.ts")], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: "production",
      DATABASE_URL: databaseUrl,
      CATCAFE_RUNNER_ID: id,
      CATCAFE_RUNNER_LEASE_MS: String(LEASE_MS),
      CATCAFE_RUNNER_RECLAIM_BACKOFF_MS: "200",
      CATCAFE_RUNNER_CONCURRENCY: "4",
      CATCAFE_RUNNER_DETECT_SHELLS: "0",
      CATCAFE_RUNNER_STATE_DIR: host?.stateDir ?? stateDir,
      CATCAFE_WORKSPACES_DIR: host?.workspaces ?? workspaces,
      ...(host ? { CATCAFE_REPOSITORY_PATHS: JSON.stringify(host.repositoryPaths) } : {}),
      CATCAFE_LOG_LEVEL: "error",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  runners.set(id, child);
  child.once("exit", () => runners.delete(id));
  return id;
}

function killRunner(id: string): Promise<void> {
  const child = runners.get(id);
  if (!child || child.exitCode !== null) return Promise.resolve();
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGKILL");
  return exited;
}

// --- sessions -----------------------------------------------------------------------------

interface Ack {
  sessionId: string;
  version: number;
}

const coderFix = { reply: "Changed sum to add.", files: { "src/sum.js": "module.exports = { sum: (a, b) => a + b };\n" } };
const approve = JSON.stringify({ decision: "approve", summary: "Looks right.", findings: [] });
const plan = JSON.stringify({ summary: "Run the tests.", commands: [{ argv: ["node", "--test", "test/"] }] });

async function makeProject(
  pool: ReturnType<typeof createPool>,
  repo: string,
  options: { id?: string; settings?: Record<string, unknown> } = {},
): Promise<void> {
  await upsertProject(pool, {
    id: options.id ?? "chaos",
    name: "Chaos",
    repoPath: repo,
    ...(options.settings ? { settings: options.settings } : {}),
    allowlist: [["node", "--test", "**"]],
    agents: {
      // One answer each, repeated: a step re-run after a lost runner (a later invocation) gets the same.
      // A Forge stage's answers go by its iteration (byStage): a re-run attempt gets the same too.
      coder: { kind: "scripted", id: "coder-sim", responses: [coderFix], byStage: instantScripts(FORGE_DEMO_SCRIPTS.coder) },
      reviewer: {
        kind: "scripted",
        id: "reviewer-sim",
        responses: [{ reply: approve }],
        byStage: instantScripts(FORGE_DEMO_SCRIPTS.reviewer),
      },
      tester: { kind: "scripted", id: "tester-sim", responses: [{ reply: plan }] },
      planner: { kind: "scripted", id: "planner-sim", responses: [{ reply: "-" }], byStage: instantScripts(FORGE_DEMO_SCRIPTS.planner) },
    },
  });
}

async function start(
  store: EventStore,
  pool: ReturnType<typeof createPool>,
  mode: "proposal" | "implementation" | "forge",
  projectId = "chaos",
): Promise<Ack> {
  for (;;) {
    try {
      if (mode === "forge") return await newForge({ store, pool }, { projectId, idea: FORGE_DEMO_IDEA, gates: [] }, actor);
      return await startTask({ store, pool }, { projectId, prompt: "Fix sum()", mode }, actor);
    } catch (err) {
      if (isAppError(err)) throw err;
      await sleep(200); // the database is away: try again, as a client would
    }
  }
}

/**
 * A fork of a session that finished well, made as a person would: a fork at a random event
 * (from its task's start to before its end), a revert (a task to its build, a pipeline to its
 * design), or a modify. Null when no session in `from` finished well yet.
 */
async function forkOne(store: EventStore, pool: ReturnType<typeof createPool>, from: string[], kind: number): Promise<Ack | null> {
  const done: string[] = [];
  for (const id of from) {
    const s = await taskState(store, id).catch(() => null);
    if (s?.status === "finished" && (s.outcome === "approved" || s.outcome === "completed")) done.push(id);
  }
  const base = done[Math.floor(Math.random() * done.length)];
  if (!base) return null;
  const events = await store.readStream(base);
  const forge = (await taskState(store, base)).status !== "none" && events.some((e) => e.type === "StageStarted");
  const deps = { store, pool };
  for (;;) {
    try {
      if (kind % 3 === 0) return await modifySession(deps, { sessionId: base, change: "Add a --lines option" }, actor);
      if (kind % 3 === 1) return await revertSession(deps, { sessionId: base, to: forge ? "design" : "building", note: "chaos" }, actor);
      const startedAt = events.find((e) => e.type === "TaskStarted")!.version;
      const endAt = events.find((e) => e.type === "SessionFinalized")!.version;
      const at = startedAt + Math.floor(Math.random() * (endAt - startedAt));
      return await forkSession(deps, { sessionId: base, atVersion: at, note: "chaos" }, actor);
    } catch (err) {
      if (isAppError(err)) throw err;
      await sleep(200); // the database is away: try again
    }
  }
}

/**
 * Starts `n` implementation sessions (every third a Forge pipeline with `forge`; with
 * `forks`, every fourth a fork, revert or modify of a finished one), adding them and their
 * acknowledgements to `into`.
 */
async function startMany(
  store: EventStore,
  pool: ReturnType<typeof createPool>,
  n: number,
  into: { sessions: string[]; acks: Ack[] },
  options: { forge?: boolean; forks?: boolean; projectId?: string } = {},
): Promise<void> {
  for (let i = 0; i < n; i++) {
    const position = into.sessions.length;
    const forked = options.forks && position % 4 === 3 ? await forkOne(store, pool, into.sessions, (position - 3) / 4) : null;
    const ack = forked ?? (await start(store, pool, options.forge && position % 3 === 2 ? "forge" : "implementation", options.projectId));
    into.sessions.push(ack.sessionId);
    into.acks.push(ack);
  }
}

async function taskState(store: EventStore, sessionId: string) {
  return foldTask(await store.readStream(sessionId));
}

/** Waits until every session finished (or SETTLE_MS passed); returns the stuck ones and the time it took. */
async function settle(store: EventStore, sessions: string[], from = Date.now()): Promise<{ stuck: string[]; settleMs: number }> {
  const deadline = Date.now() + SETTLE_MS;
  let open = sessions;
  while (open.length && Date.now() < deadline) {
    const states = await Promise.all(open.map(async (id) => [id, (await taskState(store, id).catch(() => null))?.status] as const));
    open = states.filter(([, status]) => status !== "finished").map(([id]) => id);
    if (open.length) await sleep(250);
  }
  return { stuck: open, settleMs: Date.now() - from };
}

async function countSteps(pool: ReturnType<typeof createPool>, sessions: string[]): Promise<number> {
  const r = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM steps WHERE session_id = ANY($1)", [sessions]);
  return r.rows[0]!.n;
}

/** Acknowledged writes that are not in the log: an acknowledged version the stream never reached. */
async function writesLost(store: EventStore, acks: Ack[]): Promise<number> {
  let lost = 0;
  for (const ack of acks) {
    const events = await store.readStream(ack.sessionId);
    if ((events.at(-1)?.version ?? 0) < ack.version) lost++;
  }
  return lost;
}

/** Sessions by outcome, and the reasons of those that failed (printed: they are harm here). */
async function outcomes(store: EventStore, sessions: string[]): Promise<{ approved: number; failed: number; other: number }> {
  const counts = { approved: 0, failed: 0, other: 0 };
  for (const id of sessions) {
    const events = await store.readStream(id);
    // The last: a fork inherits its parent's ending, a resumed session ends again.
    const final = events.filter((e) => e.type === "SessionFinalized").at(-1)?.data as
      { outcome: string; errorClass: string | null; diagnosis: string | null } | undefined;
    // A review loop ends approved, a Forge pipeline completed: both are the work done.
    if (final?.outcome === "approved" || final?.outcome === "completed") counts.approved++;
    else if (final && final.outcome !== "cancelled") {
      counts.failed++;
      say(`  ${id} ended ${final.outcome}: ${final.errorClass ?? ""} ${final.diagnosis ?? ""}`.slice(0, 300));
    } else counts.other++;
  }
  return counts;
}

function sideEffectLines(sessions: string[], dirs = [workspaces]): { overlaps: number; runs: number } {
  let overlaps = 0;
  let runs = 0;
  for (const file of sessions.flatMap((session) => dirs.map((dir) => path.join(dir, session, ".chaos", "log")))) {
    const lines = fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n") : [];
    for (const line of lines) {
      const [what] = line.split(" ");
      if (what === "overlap") overlaps++;
      if (what === "start") runs++;
    }
  }
  return { overlaps, runs };
}

/** Waits for `sessions` to settle, then the figures every session scenario reports. */
async function sessionFigures(
  scenario: string,
  store: EventStore,
  pool: ReturnType<typeof createPool>,
  run: { sessions: string[]; acks: Ack[] },
  from = Date.now(),
  workspaceDirs?: string[],
): Promise<Figures & { testRuns: number }> {
  const { stuck, settleMs } = await settle(store, run.sessions, from);
  const { overlaps, runs } = sideEffectLines(run.sessions, workspaceDirs);
  const ended = await outcomes(store, run.sessions);
  return {
    scenario,
    sessions: run.sessions.length,
    approved: ended.approved,
    failed: ended.failed,
    steps: await countSteps(pool, run.sessions),
    stuck: stuck.length,
    doubleExecutions: overlaps,
    testRuns: runs,
    writesLost: await writesLost(store, run.acks),
    settleMs,
  };
}

// --- scenarios ----------------------------------------------------------------------------

async function scenarioKills(store: EventStore, pool: ReturnType<typeof createPool>, url: string): Promise<Figures> {
  const sessions: string[] = [];
  const acks: Ack[] = [];
  let kills = 0;
  const began = Date.now();
  const active = QUICK ? 6 : 12;
  // A few sessions finished first, so that forks, reverts and modifies have a base from the start.
  await startMany(store, pool, 3, { sessions, acks }, { forge: true });
  await settle(store, sessions);
  while (kills < KILLS) {
    // Keep sessions coming while the kills go on.
    const open = (await Promise.all(sessions.slice(-active).map((id) => taskState(store, id)))).filter((s) => s.status !== "finished");
    await startMany(store, pool, active - open.length, { sessions, acks }, { forge: true, forks: true });
    await sleep(150 + Math.random() * 400);
    const ids = [...runners.keys()];
    const victim = ids[Math.floor(Math.random() * ids.length)];
    if (victim) {
      await killRunner(victim);
      kills++;
      startRunner(url);
    }
  }
  say(`kills: ${kills} runner kills over ${sessions.length} sessions in ${Math.round((Date.now() - began) / 1000)} s; settling`);
  const counts = (
    await pool.query<{ forge: number; forks: number }>(
      "SELECT count(*) FILTER (WHERE workflow = 'forge')::int AS forge, count(parent_id)::int AS forks FROM sessions WHERE id = ANY($1)",
      [sessions],
    )
  ).rows[0]!;
  return { ...(await sessionFigures("kills", store, pool, { sessions, acks })), kills, forgeSessions: counts.forge, forks: counts.forks };
}

async function scenarioDatabase(store: EventStore, pool: ReturnType<typeof createPool>): Promise<Figures> {
  const sessions: string[] = [];
  const acks: Ack[] = [];
  await startMany(store, pool, QUICK ? 6 : 15, { sessions, acks }, { forge: true });
  await sleep(800);
  const pid = Number(fs.readFileSync(path.join(work, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
  process.kill(pid, "SIGKILL");
  say(`database: PostgreSQL (pid ${pid}) killed with sessions in flight`);
  await sleep(2_000);
  await startPostgres();
  say("database: PostgreSQL started again");
  return {
    ...(await sessionFigures("database", store, pool, { sessions, acks })),
    runnersAlive: [...runners.values()].filter((c) => c.exitCode === null).length,
  };
}

async function scenarioPartition(store: EventStore, pool: ReturnType<typeof createPool>, url: string): Promise<Figures> {
  // One more runner, reaching the database only through a proxy that is then cut.
  const proxy = await startTcpProxy(pgPort);
  // The other runners paused (SIGSTOP) until the proxied one holds steps: then it is cut off
  // with work in hand, and the others (resumed) must take that work over.
  const others = [...runners.values()];
  for (const c of others) c.kill("SIGSTOP");
  const cutId = startRunner(proxy.url(url));
  const sessions: string[] = [];
  const acks: Ack[] = [];
  await startMany(store, pool, QUICK ? 4 : 8, { sessions, acks }, { forge: true });
  const held = async () =>
    (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM steps WHERE lease_owner = $1 AND state = 'running'", [cutId])).rows[0]!
      .n;
  const deadline = Date.now() + 30_000;
  while ((await held()) < 2 && Date.now() < deadline) await sleep(50);
  const heldAtCut = await held();
  for (const c of others) c.kill("SIGCONT");
  proxy.cut();
  const cutAt = Date.now();
  say(`partition: runner ${cutId} cut off for ${(LEASE_MS * 3) / 1000} s (lease ${LEASE_MS / 1000} s)`);
  await sleep(LEASE_MS * 3);
  proxy.restore();
  const figures = await sessionFigures("partition", store, pool, { sessions, acks }, cutAt);
  await killRunner(cutId);
  await proxy.close();
  return { ...figures, heldAtCut };
}

async function awaitingConfirm(store: EventStore, pool: ReturnType<typeof createPool>, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await start(store, pool, "proposal")).sessionId);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const states = await Promise.all(ids.map((id) => taskState(store, id)));
    if (states.every((s) => s.status === "active" && s.fsm === "awaiting_operator_confirm")) return ids;
    if (Date.now() > deadline) throw new Error("sessions did not reach awaiting_operator_confirm");
    await sleep(200);
  }
}

async function scenarioConfirms(store: EventStore, pool: ReturnType<typeof createPool>): Promise<Figures> {
  const [sessionId] = await awaitingConfirm(store, pool, 1);
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, () => confirmTask({ store, pool }, { sessionId: sessionId!, via: "api" }, actor)),
  );
  const won = results.filter((r) => r.status === "fulfilled");
  const conflicts = results.filter((r) => r.status === "rejected" && isAppError(r.reason, "CONFLICT")).length;
  const { stuck, settleMs } = await settle(store, [sessionId!]);
  const confirmed = (await store.readStream(sessionId!)).filter((e) => e.type === "OperatorConfirmed").length;
  return {
    scenario: "confirms",
    sessions: 1,
    steps: await countSteps(pool, [sessionId!]),
    stuck: stuck.length,
    doubleExecutions: sideEffectLines([sessionId!]).overlaps + Math.max(0, confirmed - 1),
    writesLost: await writesLost(
      store,
      won.map((r) => (r as PromiseFulfilledResult<Ack>).value),
    ),
    won: won.length,
    conflicts,
    otherErrors: 50 - won.length - conflicts,
    settleMs,
  };
}

async function scenarioRaces(store: EventStore, pool: ReturnType<typeof createPool>): Promise<Figures> {
  const sessions = await awaitingConfirm(store, pool, QUICK ? 6 : 20);
  const acks: Ack[] = [];
  let otherErrors = 0;
  await Promise.all(
    sessions.map(async (sessionId) => {
      const [confirm, cancel] = await Promise.allSettled([
        confirmTask({ store, pool }, { sessionId, via: "api" }, actor),
        cancelTask({ store, pool }, { sessionId, reason: "racing" }, actor),
      ]);
      for (const r of [confirm, cancel]) {
        if (r.status === "fulfilled") acks.push(r.value);
        else if (!isAppError(r.reason, "CONFLICT")) otherErrors++;
      }
    }),
  );
  const { stuck, settleMs } = await settle(store, sessions);
  const outcomes = await Promise.all(sessions.map(async (id) => (await taskState(store, id)) as { outcome?: string }));
  return {
    scenario: "races",
    sessions: sessions.length,
    steps: await countSteps(pool, sessions),
    stuck: stuck.length,
    doubleExecutions: sideEffectLines(sessions).overlaps,
    writesLost: await writesLost(store, acks),
    cancelled: outcomes.filter((o) => o.outcome === "cancelled").length,
    approved: outcomes.filter((o) => o.outcome === "approved").length,
    otherErrors,
    settleMs,
  };
}

/**
 * Builds cancelled mid-way, then two resumes of each at once: exactly one resumes it (the
 * other is told it already runs), and every one is approved in the end.
 */
async function scenarioResumes(store: EventStore, pool: ReturnType<typeof createPool>): Promise<Figures> {
  const run = { sessions: [] as string[], acks: [] as Ack[] };
  await startMany(store, pool, QUICK ? 6 : 20, run);
  const deps = { store, pool, lease: (stepId: string) => releaseOrphanedLease(pool, stepId) };
  await Promise.all(
    run.sessions.map(async (sessionId) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const s = await taskState(store, sessionId);
        if (s.status === "finished") return;
        if (s.fsm === "building" || s.fsm === "reviewing" || Date.now() > deadline) break;
        await sleep(20);
      }
      await cancelTask({ store, pool }, { sessionId, reason: "interrupted" }, actor).catch((err: unknown) => {
        if (!isAppError(err, "CONFLICT")) throw err;
      });
    }),
  );
  await settle(store, run.sessions);
  const cancelled: string[] = [];
  for (const id of run.sessions) if (((await taskState(store, id)) as { outcome?: string }).outcome === "cancelled") cancelled.push(id);
  let doubleResumes = 0;
  let otherErrors = 0;
  const from = Date.now();
  await Promise.all(
    cancelled.map(async (sessionId) => {
      const results = await Promise.allSettled([resumeSession(deps, { sessionId }, actor), resumeSession(deps, { sessionId }, actor)]);
      let resumed = 0;
      for (const r of results) {
        if (r.status === "fulfilled") {
          if (r.value.status === "resumed") {
            resumed++;
            run.acks.push(r.value);
          }
        } else if (!isAppError(r.reason, "CONFLICT")) otherErrors++;
      }
      if (resumed !== 1) doubleResumes++;
    }),
  );
  return { ...(await sessionFigures("resumes", store, pool, run, from)), resumed: cancelled.length, doubleResumes, otherErrors };
}

// --- conversations ----------------------------------------------------------------------------

/** A conversation agent whose reply streams for a while (so kills land mid-call). */
function chatter(id: string, reply: string, ballot: string, sop: string) {
  const slow = (text: string) => [{ reply: text, chunkDelayMs: 40 }];
  return {
    kind: "scripted" as const,
    id,
    skills: [id === "ping" ? "database" : "css"],
    responses: slow(`${id}: ok`),
    byOutput: { reply: slow(reply), ballot: slow(ballot), sop: slow(sop) },
  };
}

async function makeChatProject(pool: ReturnType<typeof createPool>, repo: string): Promise<void> {
  const ballot = (choice: string) => JSON.stringify({ choice, rationale: "chaos", confidence: 0.5 });
  await upsertProject(pool, {
    id: "chaos-chat",
    name: "Chaos chat",
    repoPath: repo,
    allowlist: [],
    agents: {
      // ping and pong mention each other: the loop guard stalls each discussion.
      coder: chatter("ping", "@pong over to you", ballot("a"), "done"),
      reviewer: chatter("pong", "@ping no, you", ballot("b"), "done"),
      tester: chatter("tick", "noted", ballot("a"), '{"decision": "approve"}'),
    },
  });
}

const CHAT_SPECS = [
  { mode: "free_discussion", text: (t: number) => `@ping round ${t}` },
  { mode: "voting", modeConfig: { quorum: 2, timeoutMs: 30_000 }, text: (t: number) => `a or b, round ${t}?` },
  { mode: "expert_routing", text: (t: number) => `a database question, round ${t}` },
  {
    mode: "sop",
    modeConfig: {
      steps: [
        { id: "work", agent: "ping", instruction: "Do it." },
        {
          id: "check",
          agent: "tick",
          instruction: "Check it.",
          branches: [{ field: "decision", equals: "changes", goto: "work" }],
          next: null,
        },
      ],
    },
    text: (t: number) => `task ${t}`,
  },
] as const;

/** Retries what a client would retry while the database is away; a refusal is an answer. */
async function whileAway<T>(act: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await act();
    } catch (err) {
      if (isAppError(err)) throw err;
      await sleep(200);
    }
  }
}

async function scenarioConversations(store: EventStore, pool: ReturnType<typeof createPool>, url: string): Promise<Figures> {
  const deps = { store, pool };
  const count = QUICK ? 8 : 20;
  const turns = QUICK ? 3 : 6;
  const began = Date.now();
  const conversations = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const spec = CHAT_SPECS[i % CHAT_SPECS.length]!;
      const started = await whileAway(() =>
        startConversation(
          deps,
          { projectId: "chaos-chat", mode: spec.mode, ...("modeConfig" in spec ? { modeConfig: spec.modeConfig } : {}) },
          actor,
        ),
      );
      return { id: started.sessionId, spec };
    }),
  );
  const acks: Ack[] = [];
  let kills = 0;
  let killing = true;
  const killer = (async () => {
    while (killing) {
      await sleep(150 + Math.random() * 400);
      const ids = [...runners.keys()];
      const victim = ids[Math.floor(Math.random() * ids.length)];
      if (!victim || !killing) continue;
      await killRunner(victim);
      kills++;
      startRunner(url);
    }
  })();
  let databaseKilled = false;
  for (let turn = 1; turn <= turns; turn++) {
    const posted = Promise.all(
      conversations.map(async (c) => {
        const r = await whileAway(() => postMessage(deps, { sessionId: c.id, text: c.spec.text(turn) }, actor));
        acks.push({ sessionId: c.id, version: r.version });
      }),
    );
    if (turn === Math.ceil(turns / 2) && !databaseKilled) {
      databaseKilled = true;
      await sleep(300);
      const pid = Number(fs.readFileSync(path.join(work, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
      process.kill(pid, "SIGKILL");
      say(`conversations: PostgreSQL (pid ${pid}) killed with calls in flight`);
      await sleep(2_000);
      await startPostgres();
      say("conversations: PostgreSQL started again");
    }
    await posted;
    await sleep(800 + Math.random() * 800);
  }
  killing = false;
  await killer;
  say(
    `conversations: ${kills} runner kills over ${count} conversations × ${turns} turns in ${Math.round((Date.now() - began) / 1000)} s; settling`,
  );
  const ids = conversations.map((c) => c.id);
  const from = Date.now();
  const open = async () =>
    (
      await pool.query<{ n: number }>(
        "SELECT count(DISTINCT session_id)::int AS n FROM steps WHERE session_id = ANY($1) AND kind = 'conversation_call' AND state IN ('pending', 'running')",
        [ids],
      )
    ).rows[0]!.n;
  while ((await whileAway(open)) > 0 && Date.now() - from < SETTLE_MS) await sleep(250);
  const stuck = await open();
  let auditProblems = 0;
  let doubleReplies = 0;
  let failedCalls = 0;
  let stalls = 0;
  let tallies = 0;
  for (const id of ids) {
    const events = await store.readStream(id);
    const problems = auditConversation(events);
    for (const p of problems) say(`  ${id}: ${p.slice(0, 300)}`);
    auditProblems += problems.length;
    const replies = events.filter((e) => e.type === "AgentReplied").map((e) => (e.data as { callId: string }).callId);
    doubleReplies += replies.length - new Set(replies).size;
    failedCalls += events.filter((e) => e.type === "AgentCallFailed").length;
    stalls += events.filter((e) => e.type === "ConversationStalled").length;
    tallies += events.filter((e) => e.type === "ModeNoted" && (e.data as { note: { kind: string } }).note.kind === "tallied").length;
  }
  const completions = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT data->>'stepId' FROM events WHERE stream_id = ANY($1) AND type = 'StepCompleted'
     GROUP BY 1 HAVING count(*) > 1) twice`,
    [ids],
  );
  return {
    scenario: "conversations",
    sessions: count,
    steps: await countSteps(pool, ids),
    stuck,
    doubleExecutions: doubleReplies + completions.rows[0]!.n,
    writesLost: await writesLost(store, acks),
    settleMs: Date.now() - from,
    auditProblems,
    failed: failedCalls,
    kills,
    stalls,
    tallies,
  };
}

// --- main -----------------------------------------------------------------------------------

async function scenarioHosts(store: EventStore, pool: ReturnType<typeof createPool>, url: string, repo: string): Promise<Figures> {
  // The shared runners step aside: only the two hosts' runners run this project's steps.
  await Promise.all([...runners.keys()].map(killRunner));
  const remote = path.join(work, "remote.git");
  spawnSyncOk("git", ["clone", "-q", "--bare", repo, remote], work);
  const hosts: Host[] = ["a", "b"].map((name) => {
    const dir = path.join(work, `host-${name}`);
    const clone = path.join(dir, "clone");
    fs.mkdirSync(dir, { recursive: true });
    spawnSyncOk("git", ["clone", "-q", remote, clone], dir);
    return { name, workspaces: path.join(dir, "workspaces"), stateDir: path.join(dir, "runners"), repositoryPaths: { [repo]: clone } };
  });
  // The bare remote is the home of the sessions' branches: each build is pushed there.
  await makeProject(pool, repo, { id: "chaos-hosts", settings: { delivery: { remote, method: "push" } } });
  for (const host of hosts) for (let i = 0; i < 2; i++) startRunner(url, host);
  const sessions: string[] = [];
  const acks: Ack[] = [];
  const kills = QUICK ? 10 : 40;
  const began = Date.now();
  for (let k = 0; k < kills; k++) {
    const open = (await Promise.all(sessions.slice(-8).map((id) => taskState(store, id)))).filter((s) => s.status !== "finished");
    await startMany(store, pool, 8 - open.length, { sessions, acks }, { forge: true, forks: true, projectId: "chaos-hosts" });
    await sleep(200 + Math.random() * 500);
    const victim = [...runners.keys()][Math.floor(Math.random() * runners.size)];
    if (!victim) continue;
    await killRunner(victim);
    startRunner(
      url,
      hosts.find((h) => victim.startsWith(`chaos-${h.name}-`)),
    );
  }
  say(`hosts: ${kills} runner kills over ${sessions.length} sessions on 2 hosts in ${Math.round((Date.now() - began) / 1000)} s; settling`);
  const figures = await sessionFigures(
    "hosts",
    store,
    pool,
    { sessions, acks },
    Date.now(),
    hosts.map((h) => h.workspaces),
  );
  // Every session's branch on the remote is at its head, whichever host built it last.
  let branchMismatches = 0;
  let hopped = 0;
  for (const id of sessions) {
    const state = await taskState(store, id);
    if (state.status === "none") continue;
    const onRemote = spawnSync("git", ["--git-dir", remote, "rev-parse", "--verify", "--quiet", `refs/heads/catcafe/${id}`], {
      encoding: "utf8",
    }).stdout.trim();
    const expected = state.head === state.config.project.baseCommit ? "" : state.head;
    if (onRemote !== expected) {
      branchMismatches++;
      say(`  ${id}: catcafe/${id} on the remote is ${onRemote || "missing"}, the session's head ${expected || "its base (no branch)"}`);
    }
    const { rows } = await pool.query<{ hosts: number }>(
      `SELECT count(DISTINCT split_part(data->>'runnerId', '-', 2))::int AS hosts FROM events WHERE stream_id = $1 AND type = 'StepStarted'`,
      [id],
    );
    if ((rows[0]?.hosts ?? 0) > 1) hopped++;
  }
  await Promise.all([...runners.keys()].map(killRunner));
  for (let i = 0; i < RUNNERS; i++) startRunner(url);
  return { ...figures, kills, hopped, branchMismatches };
}

/**
 * The bake-off's repository: the project's, with `.catcafe/` naming three scripted coders
 * (each fixes sum() its own way), the scripted reviewer and tester of the other scenarios.
 */
function makeBakeOffRepo(): string {
  const repo = path.join(work, "bake-off");
  fs.cpSync(path.join(work, "project"), repo, { recursive: true });
  const fix = (body: string) => ({ reply: "Changed sum.", files: { "src/sum.js": `module.exports = { sum: ${body} };\n` } });
  const config: Record<string, unknown> = {
    "version.json": { configVersion: "1.0" },
    "brains.json": {
      brains: {
        "coder-a": { provider: "scripted", responses: [fix("(a, b) => a + b")] },
        "coder-b": { provider: "scripted", responses: [fix("(a, b) => b + a")] },
        "coder-c": { provider: "scripted", responses: [fix("(a, b) => [a, b].reduce((x, y) => x + y, 0)")] },
        reviewer: { provider: "scripted", responses: [{ reply: approve }] },
        tester: { provider: "scripted", responses: [{ reply: plan }] },
      },
    },
    "agents.json": {
      agents: [
        ...["coder-a", "coder-b", "coder-c"].map((id) => ({
          id,
          role: "coder",
          defaultBrain: id,
          manifest: { capabilities: ["code-generation"] },
        })),
        { id: "reviewer-sim", role: "reviewer", defaultBrain: "reviewer" },
        { id: "tester-sim", role: "tester", defaultBrain: "tester" },
      ],
    },
  };
  fs.mkdirSync(path.join(repo, ".catcafe"), { recursive: true });
  for (const [name, content] of Object.entries(config))
    fs.writeFileSync(path.join(repo, ".catcafe", name), JSON.stringify(content, null, 2));
  const git = (...a: string[]) =>
    spawnSyncOk("git", ["-c", "user.name=chaos", "-c", "user.email=chaos@localhost", "-c", "commit.gpgsign=false", ...a], repo);
  git("add", "-A");
  git("commit", "-q", "-m", "three coders");
  return repo;
}

/** Steps completed twice (two StepCompleted events of one step): a step that ran to its end twice. */
async function stepsCompletedTwice(pool: ReturnType<typeof createPool>, sessions: string[]): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT data->>'stepId' FROM events WHERE stream_id = ANY($1) AND type = 'StepCompleted'
       GROUP BY data->>'stepId' HAVING count(*) > 1) twice`,
    [sessions],
  );
  return rows[0]!.n;
}

/**
 * Bake-offs (docs/bake-off.md) while runners are killed at random: three contenders each, forked
 * at the confirm, run through the kills; every contender must still end approved, no step run
 * twice (the test's side-effect log, and no step completed twice in the log); then a pick per
 * bake-off must deliver nothing wrong: the parent ends winner_chosen, the others not_chosen.
 */
async function scenarioBakeOff(store: EventStore, pool: ReturnType<typeof createPool>, url: string): Promise<Figures> {
  await makeProject(pool, makeBakeOffRepo(), { id: "chaos-bake" });
  const n = QUICK ? 2 : 4;
  const parents: string[] = [];
  for (let i = 0; i < n; i++) {
    const ack = await startTask(
      { store, pool },
      {
        projectId: "chaos-bake",
        prompt: "Fix sum()",
        bakeOff: { contenders: [{ coder: "coder-a" }, { coder: "coder-b" }, { coder: "coder-c" }] },
      },
      actor,
    );
    parents.push(ack.sessionId);
  }
  const ready = await settleInto(store, parents, "awaiting_operator_confirm");
  if (ready.length) throw new Error(`bake-offs did not reach their confirm: ${ready.join(", ")}`);
  const acks: Ack[] = [];
  for (const sessionId of parents) acks.push(await confirmTask({ store, pool }, { sessionId, via: "api" }, actor));
  const contenders: string[] = [];
  for (const id of parents) {
    const forked = (await store.readStream(id)).find((e) => e.type === "BakeOffForked")!.data as {
      contenders: Array<{ sessionId: string }>;
    };
    contenders.push(...forked.contenders.map((c) => c.sessionId));
  }
  const began = Date.now();
  let kills = 0;
  const maxKills = QUICK ? 8 : 25;
  while (kills < maxKills) {
    const open = (await Promise.all(contenders.map((id) => taskState(store, id)))).filter((s) => s.status !== "finished");
    if (!open.length) break;
    await sleep(150 + Math.random() * 400);
    const ids = [...runners.keys()];
    const victim = ids[Math.floor(Math.random() * ids.length)];
    if (victim) {
      await killRunner(victim);
      kills++;
      startRunner(url);
    }
  }
  say(`bake-off: ${kills} runner kills over ${parents.length} bake-offs (${contenders.length} contenders); settling`);
  const figures = await sessionFigures("bake-off", store, pool, { sessions: contenders, acks: [] }, began);
  // Every bake-off: its first contender picked; the parent ends winner_chosen, the others not_chosen, nothing else.
  let pickProblems = 0;
  for (const parent of parents) {
    const picked = await pickWinner({ store, pool }, { sessionId: parent, contenderId: "c1", reason: "chaos" }, actor).catch(
      (err: unknown) => {
        say(`  ${parent}: the pick failed: ${String(err)}`);
        return null;
      },
    );
    if (!picked) {
      pickProblems++;
      continue;
    }
    const outcomesNow = await Promise.all(
      [parent, picked.winnerSessionId, ...contenders.filter((c) => c.startsWith(`${parent}-`) && c !== picked.winnerSessionId)].map(
        async (id) => ((await taskState(store, id)) as { outcome?: string }).outcome,
      ),
    );
    const [parentOutcome, winnerOutcome, ...others] = outcomesNow;
    if (
      parentOutcome !== "winner_chosen" ||
      winnerOutcome !== "approved" ||
      others.length !== 2 ||
      others.some((o) => o !== "not_chosen")
    ) {
      pickProblems++;
      say(`  ${parent}: after the pick ${JSON.stringify(outcomesNow)}`);
    }
  }
  return {
    ...figures,
    doubleExecutions: figures.doubleExecutions + (await stepsCompletedTwice(pool, contenders)),
    writesLost: await writesLost(store, acks),
    bakeOffs: parents.length,
    kills,
    pickProblems,
  };
}

/** Waits until every session is in `fsm` (or SETTLE_MS passed); the ones that are not. */
async function settleInto(store: EventStore, sessions: string[], fsm: string): Promise<string[]> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const states = await Promise.all(sessions.map(async (id) => [id, await taskState(store, id)] as const));
    const not = states.filter(([, s]) => s.fsm !== fsm).map(([id]) => id);
    if (!not.length || Date.now() > deadline) return not;
    await sleep(200);
  }
}

async function main(): Promise<void> {
  const began = Date.now();
  pgPort = await freePort();
  await startPostgres();
  await pgServer.createDatabase("chaos");
  const url = pgServer.urlFor("chaos");
  await migrate(url);
  const pool = createPool(url, 10);
  pool.on("error", () => {});
  const store = createAppEventStore(pool);
  const repo = makeRepo();
  await makeProject(pool, repo);
  await makeChatProject(pool, repo);
  for (let i = 0; i < RUNNERS; i++) startRunner(url);
  say(`${RUNNERS} runners, lease ${LEASE_MS} ms, work in ${work}`);

  const scenarios: Record<string, () => Promise<Figures>> = {
    kills: () => scenarioKills(store, pool, url),
    database: () => scenarioDatabase(store, pool),
    partition: () => scenarioPartition(store, pool, url),
    confirms: () => scenarioConfirms(store, pool),
    races: () => scenarioRaces(store, pool),
    resumes: () => scenarioResumes(store, pool),
    conversations: () => scenarioConversations(store, pool, url),
    hosts: () => scenarioHosts(store, pool, url, repo),
    "bake-off": () => scenarioBakeOff(store, pool, url),
  };
  const chosen = args.only ? [args.only] : Object.keys(scenarios);
  const figures: Figures[] = [];
  for (const name of chosen) {
    const run = scenarios[name];
    if (!run) throw new Error(`no scenario "${name}" (known: ${Object.keys(scenarios).join(", ")})`);
    say(`--- ${name}`);
    const f = await run();
    figures.push(f);
    say(JSON.stringify(f));
  }
  await pool.end();
  // Harm: a session stuck or failed by the faults, a step run twice at once, an acknowledged
  // write lost, an error other than the expected conflict.
  const harm = figures.reduce(
    (n, f) =>
      n +
      f.stuck +
      f.doubleExecutions +
      f.writesLost +
      Number(f.failed ?? 0) +
      Number(f.otherErrors ?? 0) +
      Number(f.doubleResumes ?? 0) +
      Number(f.auditProblems ?? 0) +
      Number(f.branchMismatches ?? 0) +
      Number(f.pickProblems ?? 0),
    0,
  );
  const report = {
    when: new Date().toISOString(),
    quick: QUICK,
    runners: RUNNERS,
    leaseMs: LEASE_MS,
    durationMs: Date.now() - began,
    harm,
    figures,
  };
  fs.mkdirSync(path.dirname(args.out!), { recursive: true });
  fs.writeFileSync(args.out!, `${JSON.stringify(report, null, 2)}\n`);
  console.table(figures);
  say(`${harm === 0 ? "all zeros" : `HARM: ${harm}`} (report: ${path.relative(ROOT, args.out!)})`);
  process.exitCode = harm === 0 ? 0 : 1;
}

async function cleanup(): Promise<void> {
  await Promise.all([...runners.keys()].map(killRunner));
  await pgServer?.stop().catch(() => {});
  if (process.env.CHAOS_KEEP) say(`kept ${work}`);
  else fs.rmSync(work, { recursive: true, force: true });
}

process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));
try {
  await main();
} catch (err) {
  console.error(`[chaos] failed: ${(err as Error).stack ?? err}`);
  process.exitCode = 2;
} finally {
  await cleanup();
}
