// `npm start` end to end, with real processes: first start on an empty data directory
// (embedded PostgreSQL, migrations, web server, runner), a terminal's Ctrl+C leaves
// nothing behind, a second start reuses the data, after `kill -9` of everything (or of
// the process that owns the children) the next start recovers, and a dying child or a
// killed front process stops everything.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/ports";
import {
  descendantRunning,
  descendantsOf,
  isAlive,
  killTree,
  postmasterPid,
  processesMentioning,
  startProcess,
  tail,
  waitForExit,
  waitForHealth,
  waitForOutput,
  waitUntil,
  type StartedProcess,
} from "../helpers/processes";
import { ensureWebBuild, WEB_BUILD_TIMEOUT_MS } from "../helpers/web-build";

const ROOT = path.resolve(import.meta.dirname, "../..");
const START_TIMEOUT_MS = 60_000;

let dataDir: string;
let pgDir: string;
let port: number;
let pgPort: number;
let healthUrl: string;
let current: StartedProcess | null = null;

function startCatCafe(): StartedProcess {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CATCAFE_DATA_DIR: dataDir,
    PORT: String(port),
    CATCAFE_PG_PORT: String(pgPort),
    CATCAFE_LOG_LEVEL: "info",
  };
  // What a user's shell would not have: the test runner's own settings and any database.
  for (const name of ["DATABASE_URL", "NEXTAUTH_SECRET", "NEXTAUTH_URL", "NODE_ENV", "VITEST", "VITEST_POOL_ID", "VITEST_WORKER_ID"])
    delete env[name];
  // Its own process group, like a job a terminal started: Ctrl+C signals that whole group.
  current = startProcess(process.execPath, ["--import", "tsx", "scripts/start.ts"], { cwd: ROOT, env, detached: true });
  return current;
}

/**
 * Ready means: this start script saw its own web server and runner healthy, and says so
 * (a runner killed with the previous run still counts as live for a while: check ours).
 */
async function waitUntilReady(proc: StartedProcess) {
  await waitForOutput(proc, /\[catcafe\] ready: /, START_TIMEOUT_MS);
  expect(proc.output()).toContain(`ready: http://localhost:${port}`);
  const health = await waitForHealth(healthUrl, proc, { minRunners: 1, timeoutMs: 10_000 });
  const runnerPid = descendantRunning(proc.pid, "server/runner/main.ts");
  expect(runnerPid, "a runner process under the start script").toBeDefined();
  const ours = await queryCatCafe(`SELECT 1 FROM runners WHERE pid = ${runnerPid} AND stopped_at IS NULL`);
  expect(ours.length, "our runner is registered and live").toBe(1);
  return health;
}

function leftovers(): string {
  return processesMentioning(dataDir)
    .map((p) => `${p.pid} ${p.commandLine}`)
    .join("\n");
}

/** PostgreSQL's pid while Cat Cafe runs: without it, a later "it is gone" check would prove nothing. */
function runningPostgres(): number {
  const pid = postmasterPid(pgDir);
  if (pid === null) throw new Error(`no readable postmaster.pid in ${pgDir} while Cat Cafe runs`);
  return pid;
}

async function expectNothingLeft(pgPid: number): Promise<void> {
  await waitUntil(() => leftovers() === "", 15_000, `no process mentions ${dataDir}:\n${leftovers()}`).catch((err: Error) => {
    throw new Error(`${err.message}\n${leftovers()}`);
  });
  expect(isAlive(pgPid), `postgres pid ${pgPid} still alive`).toBe(false);
  expect(fs.existsSync(path.join(pgDir, "postmaster.pid")), "postmaster.pid left behind").toBe(false);
}

/** `ctrl-c`: SIGINT to the whole foreground group, as a terminal sends it. */
async function stopWith(how: "ctrl-c" | "SIGTERM", proc: StartedProcess): Promise<void> {
  const pgPid = runningPostgres();
  if (how === "ctrl-c") process.kill(-proc.pid, "SIGINT");
  else proc.child.kill("SIGTERM");
  const status = await waitForExit(proc, 30_000);
  expect(status, tail(proc.output())).toEqual({ code: 0, signal: null });
  expect(proc.output()).toMatch(/\[catcafe\] stopped\n/);
  await expectNothingLeft(pgPid);
}

async function queryCatCafe<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const { postgresPassword } = JSON.parse(fs.readFileSync(path.join(dataDir, "secrets.json"), "utf8")) as { postgresPassword: string };
  const client = new pg.Client({ host: "127.0.0.1", port: pgPort, user: "catcafe", password: postgresPassword, database: "catcafe" });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-start-e2e-"));
  pgDir = path.join(dataDir, "pg");
  port = await freePort();
  pgPort = await freePort();
  healthUrl = `http://127.0.0.1:${port}/api/health`;
  // One production build shared by every start below (start.ts would build it too, but
  // then the first start's timing would include it).
  await ensureWebBuild();
}, WEB_BUILD_TIMEOUT_MS + 10_000);

afterAll(async () => {
  // Whatever happened above, leave no process and no data behind.
  if (current) killTree(current.pid);
  for (const p of processesMentioning(dataDir)) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  await waitUntil(() => processesMentioning(dataDir).length === 0, 10_000, "leftovers are gone").catch(() => {});
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start", () => {
  let secretsAfterFirstRun = "";

  it("starts from an empty data directory; Ctrl+C stops it in order, leaving no process behind", async () => {
    const proc = startCatCafe();
    const health = await waitUntilReady(proc);
    expect(health).toMatchObject({ ok: true, db: "ok" });
    expect(health.runners).toBeGreaterThanOrEqual(1);
    expect(proc.output()).toContain("initialising a new cluster");

    const secretsFile = path.join(dataDir, "secrets.json");
    secretsAfterFirstRun = fs.readFileSync(secretsFile, "utf8");
    expect(JSON.parse(secretsAfterFirstRun)).toMatchObject({ nextauthSecret: expect.any(String), postgresPassword: expect.any(String) });
    expect(fs.statSync(secretsFile).mode & 0o777).toBe(0o600);
    // The web server and the runner are separate processes, plus postgres.
    expect(descendantsOf(proc.pid).length).toBeGreaterThanOrEqual(3);
    // The web server signs sessions with the generated secret; the runner has no use for it,
    // and its environment is readable by every process of this user (scripts/lib/child-env.ts).
    const { nextauthSecret } = JSON.parse(secretsAfterFirstRun) as { nextauthSecret: string };
    const environOf = (text: string) => {
      const pid = descendantRunning(proc.pid, text);
      expect(pid, `a process running ${text} under the start script`).toBeDefined();
      return fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    };
    const webEnv = environOf("next-server");
    const runnerEnv = environOf("server/runner/main.ts");
    expect(webEnv).toContain(`NEXTAUTH_SECRET=${nextauthSecret}`);
    expect(runnerEnv.filter((entry) => entry.startsWith("NEXTAUTH_SECRET="))).toEqual([]);
    expect(runnerEnv.join("\n")).not.toContain(nextauthSecret);
    expect(runnerEnv.some((entry) => entry.startsWith("DATABASE_URL="))).toBe(true);

    await stopWith("ctrl-c", proc);
    // The runner stopped while the database was still up: it could record that it stopped.
    expect(proc.output()).toMatch(/runner stopped[\s\S]*stopping the embedded PostgreSQL/);
  }, 90_000);

  it("reuses the data directory on the next start", async () => {
    const proc = startCatCafe();
    await waitUntilReady(proc);
    expect(proc.output()).not.toContain("initialising a new cluster");
    expect(fs.readFileSync(path.join(dataDir, "secrets.json"), "utf8")).toBe(secretsAfterFirstRun);
    // The first run's runner is recorded as stopped (Ctrl+C did not take the database down
    // under it), next to this run's live one.
    const runners = await queryCatCafe<{ live: boolean }>("SELECT stopped_at IS NULL AS live FROM runners");
    expect(runners.filter((r) => !r.live).length).toBe(1);
    expect(runners.filter((r) => r.live).length).toBe(1);

    // kill -9 of the whole tree: start script, web server, runner, postgres and its backends.
    const pgPid = runningPostgres();
    killTree(proc.pid);
    await proc.exited;
    await waitUntil(() => leftovers() === "", 10_000, "the killed tree is gone");
    expect(isAlive(pgPid)).toBe(false);
    expect(fs.existsSync(path.join(pgDir, "postmaster.pid")), "a SIGKILLed postgres leaves its lock file").toBe(true);
  }, 90_000);

  it("recovers after the whole tree was killed with SIGKILL", async () => {
    const proc = startCatCafe();
    await waitUntilReady(proc);
    expect(proc.output()).toMatch(/removing stale .*postmaster\.pid/);

    // kill -9 of the process that owns the children: web server, runner and postgres stay.
    const supervisor = descendantRunning(proc.pid, "scripts/start.ts");
    expect(supervisor, "the supervising start process").toBeDefined();
    const orphans = descendantsOf(supervisor!);
    process.kill(supervisor!, "SIGKILL");
    expect((await waitForExit(proc, 10_000)).code).toBe(128 + 9);
    expect(orphans.filter(isAlive).length).toBeGreaterThanOrEqual(3);
  }, 90_000);

  it("recovers after the supervising process alone was killed, stopping what it left running", async () => {
    const proc = startCatCafe();
    await waitUntilReady(proc);
    const output = proc.output();
    expect(output).toMatch(/stopping web \(pid \d+\) left running by an earlier run/);
    expect(output).toMatch(/stopping runner \(pid \d+\) left running by an earlier run/);
    expect(output).toMatch(/found a server left running by an earlier run/);
    await stopWith("SIGTERM", proc);
  }, 90_000);

  it("starts a child that died again (runner, web, postgres), and the app answers again by itself", async () => {
    const proc = startCatCafe();
    await waitUntilReady(proc);
    const runnerPid = descendantRunning(proc.pid, "server/runner/main.ts")!;
    process.kill(runnerPid, "SIGKILL");
    await waitForOutput(proc, /runner exited unexpectedly \(killed by SIGKILL\); starting it again/, 10_000);
    await waitUntil(
      () => {
        const again = descendantRunning(proc.pid, "server/runner/main.ts");
        return again !== undefined && again !== runnerPid;
      },
      20_000,
      "a new runner process",
    );

    const pgPid = runningPostgres();
    process.kill(pgPid, "SIGKILL");
    await waitForOutput(proc, /postgres is back/, 60_000);
    // Web and runner were not restarted for it: they reconnect by themselves.
    await waitForHealth(healthUrl, proc, { minRunners: 1, timeoutMs: 60_000 });
    expect(proc.child.exitCode).toBeNull();
    await stopWith("SIGTERM", proc);
  }, 180_000);

  it("a child that keeps dying is a crash loop: everything stops, exit 1, with its last lines", async () => {
    const proc = startCatCafe();
    await waitUntilReady(proc);
    const pgPid = runningPostgres();
    const killed = new Set<number>();
    const status = await (async () => {
      for (;;) {
        const pid = descendantRunning(proc.pid, "server/runner/main.ts");
        if (pid !== undefined && !killed.has(pid)) {
          killed.add(pid);
          process.kill(pid, "SIGKILL");
        }
        if (proc.child.exitCode !== null) return waitForExit(proc, 30_000);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    expect(status.code, tail(proc.output())).toBe(1);
    expect(killed.size).toBe(5);
    expect(proc.output()).toMatch(/runner exited 5 times within 60 s \(a crash loop\); stopping everything; its last lines:/);
    await expectNothingLeft(pgPid);
  }, 180_000);

  it("stops everything when the front process is killed with SIGKILL", async () => {
    const proc = startCatCafe();
    await waitUntilReady(proc);
    const pgPid = runningPostgres();
    proc.child.kill("SIGKILL");
    await proc.exited;
    await expectNothingLeft(pgPid);
  }, 90_000);
});
