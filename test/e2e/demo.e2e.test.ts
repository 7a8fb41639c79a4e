// The demo with real processes (req N1): the first `npm start` on an empty data directory
// seeds the demo project and its proposal task; the real runner process holds the
// roundtable; a confirm (through the task service, as the API will call it) makes the
// runner build, review and really run `node --test` until the session is approved; Ctrl+C
// then stops everything cleanly. A second start finds the demo and starts no other task.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../../server/db/pool";
import { DEMO_FIXED_SOURCE, DEMO_TEST_COUNT } from "../../server/demo/content";
import { createAppEventStore } from "../../server/app-store";
import { confirmTask } from "../../server/tasks/commands";
import { freePort } from "../helpers/ports";
import {
  killTree,
  processesMentioning,
  startProcess,
  tail,
  waitForExit,
  waitForHealth,
  waitForOutput,
  waitUntil,
  type StartedProcess,
} from "../helpers/processes";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BUILD_TIMEOUT_MS = 240_000;
const START_TIMEOUT_MS = 60_000;
const DEMO_LINE = /\[catcafe\] demo: created project "demo" and a proposal task waiting for your confirm: (s-[0-9a-f]+)[;\n]/;

let dataDir: string;
let port: number;
let pgPort: number;
let current: StartedProcess | null = null;
let pool: pg.Pool | null = null;

function startCatCafe(): StartedProcess {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CATCAFE_DATA_DIR: dataDir,
    PORT: String(port),
    CATCAFE_PG_PORT: String(pgPort),
    CATCAFE_LOG_LEVEL: "info",
  };
  for (const name of [
    "DATABASE_URL",
    "NEXTAUTH_SECRET",
    "NEXTAUTH_URL",
    "NODE_ENV",
    "VITEST",
    "VITEST_POOL_ID",
    "VITEST_WORKER_ID",
    "CATCAFE_DEMO",
    "CATCAFE_WORKSPACES_DIR",
  ])
    delete env[name];
  current = startProcess(process.execPath, ["--import", "tsx", "scripts/start.ts"], { cwd: ROOT, env, detached: true });
  return current;
}

/** Ready as start.ts says it; it builds first when the build is missing or stale (then it may take minutes). */
async function waitUntilReady(proc: StartedProcess): Promise<void> {
  await waitForOutput(proc, /\[catcafe\] (ready: |.*running `next build` first)/, START_TIMEOUT_MS);
  await waitForOutput(proc, /\[catcafe\] ready: /, /running `next build` first/.test(proc.output()) ? BUILD_TIMEOUT_MS : START_TIMEOUT_MS);
  await waitForHealth(`http://127.0.0.1:${port}/api/health`, proc, { minRunners: 1, timeoutMs: 10_000 });
}

/** The embedded database, as start.ts set it up: password in secrets.json, our port. */
function catCafeDatabase(): pg.Pool {
  const { postgresPassword } = JSON.parse(fs.readFileSync(path.join(dataDir, "secrets.json"), "utf8")) as { postgresPassword: string };
  pool = createPool(`postgresql://catcafe:${encodeURIComponent(postgresPassword)}@127.0.0.1:${pgPort}/catcafe`, 4);
  return pool;
}

async function sessionState(db: pg.Pool, sessionId: string): Promise<string | undefined> {
  const r = await db.query<{ state: string }>("SELECT state FROM sessions WHERE id = $1", [sessionId]);
  return r.rows[0]?.state;
}

async function waitForState(db: pg.Pool, sessionId: string, state: string, timeoutMs: number, proc: StartedProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string | undefined;
  while ((last = await sessionState(db, sessionId)) !== state) {
    if (Date.now() > deadline)
      throw new Error(`session ${sessionId} is "${last}", not "${state}", after ${timeoutMs} ms; output:\n${tail(proc.output())}`);
    await sleep(100);
  }
}

async function stopWithCtrlC(proc: StartedProcess): Promise<void> {
  await pool?.end();
  pool = null;
  process.kill(-proc.pid, "SIGINT");
  const status = await waitForExit(proc, 30_000);
  expect(status, tail(proc.output())).toEqual({ code: 0, signal: null });
  expect(proc.output()).toMatch(/\[catcafe\] stopped\n/);
  await waitUntil(() => processesMentioning(dataDir).length === 0, 15_000, `no process mentions ${dataDir}`);
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-demo-e2e-"));
  port = await freePort();
  pgPort = await freePort();
});

afterAll(async () => {
  await pool?.end().catch(() => {});
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

describe("the demo under npm start", () => {
  let sessionId = "";

  it(
    "the first start seeds a proposal task; after a confirm the runner process takes it to approved; Ctrl+C stops cleanly",
    async () => {
      const proc = startCatCafe();
      await waitForOutput(proc, DEMO_LINE, START_TIMEOUT_MS);
      sessionId = DEMO_LINE.exec(proc.output())![1]!;
      await waitUntilReady(proc);

      const db = catCafeDatabase();
      await waitForState(db, sessionId, "awaiting_operator_confirm", 30_000, proc);
      const roundtable = await db.query<{ role: string; phase: string; simulated: boolean }>(
        "SELECT data->>'role' AS role, data->>'phase' AS phase, (data->>'simulated')::boolean AS simulated FROM events WHERE stream_id = $1 AND type = 'AgentOutputRecorded' ORDER BY version",
        [sessionId],
      );
      expect(roundtable.rows).toEqual([
        { role: "coder", phase: "discussion", simulated: true },
        { role: "reviewer", phase: "discussion", simulated: true },
        { role: "tester", phase: "discussion", simulated: true },
      ]);

      await confirmTask({ store: createAppEventStore(db), pool: db }, { sessionId, via: "api" }, { kind: "user", id: "demo-e2e" });
      await waitForState(db, sessionId, "approved", 30_000, proc);
      const tests = await db.query<{ passed: boolean; exit_code: number; stdout: string }>(
        "SELECT (data->>'passed')::boolean AS passed, (data->>'exitCode')::int AS exit_code, data->>'stdoutTail' AS stdout FROM events WHERE stream_id = $1 AND type = 'TestCommandRecorded'",
        [sessionId],
      );
      expect(tests.rows).toHaveLength(1);
      expect(tests.rows[0]).toMatchObject({ passed: true, exit_code: 0 });
      expect(tests.rows[0]!.stdout).toMatch(new RegExp(`# pass ${DEMO_TEST_COUNT}\\b`));
      // The runner worked in the session's worktree under the data directory.
      expect(fs.readFileSync(path.join(dataDir, "workspaces", sessionId, "src/slugify.js"), "utf8")).toBe(DEMO_FIXED_SOURCE);

      await stopWithCtrlC(proc);
    },
    BUILD_TIMEOUT_MS + 120_000,
  );

  it("a second start finds the demo and starts no other task", async () => {
    expect(sessionId).not.toBe("");
    const proc = startCatCafe();
    await waitForOutput(proc, /\[catcafe\] demo: /, START_TIMEOUT_MS);
    expect(proc.output()).toContain(
      `demo: project "demo" (simulated agents) is set up; its task ${sessionId} was started on an earlier run`,
    );
    await waitUntilReady(proc);
    const db = catCafeDatabase();
    const tasks = await db.query(
      "SELECT stream_id, data->>'workflow' AS workflow FROM events WHERE type = 'TaskStarted' ORDER BY position",
    );
    // The demo task and the Forge demo, each started once.
    expect(tasks.rows).toEqual([
      { stream_id: expect.any(String), workflow: "forge" },
      { stream_id: sessionId, workflow: "review_loop" },
    ]);
    await stopWithCtrlC(proc);
  }, 90_000);
});
