// Fixtures for workflow tests: a tiny git project with a failing node:test, scripted
// agents, and an in-process runner wired to the workflow engine, on a real database.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { createPool, type Queryable } from "../../server/db/pool";
import { createAppEventStore } from "../../server/app-store";
import { webhookTarget } from "../../server/projects/access";
import { upsertProject, type TProjectInput } from "../../server/projects/projects";
import { Runner, type RunnerOptions } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { appStepKinds } from "../../server/app-runner";
import { type ActiveTask, type FinishedTask, foldTask, type NoTask } from "../../server/task-engine";
import type { RecordedEvent } from "../../server/events/types";
import type { TestDatabase } from "./db";

export const BUGGY_SUM = "function sum(a, b) {\n  return a - b;\n}\nmodule.exports = { sum };\n";
export const FIXED_SUM = "function sum(a, b) {\n  return a + b;\n}\nmodule.exports = { sum };\n";
const SUM_TEST = `const test = require("node:test");\nconst assert = require("node:assert");\nconst { sum } = require("../src/sum.js");\ntest("adds", () => assert.strictEqual(sum(2, 3), 5));\n`;

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The data of a stream's events of one type, in order. */
/** The sessions whose task was started with `prompt` (how a test counts the starts of one request). */
export async function sessionsPrompted(db: Queryable, prompt: string): Promise<string[]> {
  const r = await db.query<{ stream_id: string }>(
    "SELECT stream_id FROM events WHERE type = 'TaskStarted' AND data->>'prompt' = $1 ORDER BY stream_id",
    [prompt],
  );
  return r.rows.map((row) => row.stream_id);
}

export function ofType<T = Record<string, unknown>>(events: readonly RecordedEvent[], type: string): T[] {
  return events.filter((e) => e.type === type).map((e) => e.data as T);
}

/** Runs git in `cwd` as a test author (no signing); its output, trimmed. */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();
}

/** Makes `dir` a git repository (branch main) with `files` committed (an empty commit when none); that commit. */
export function commitFiles(dir: string, files: Record<string, string>): string {
  for (const [p, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), content);
  }
  gitIn(dir, "init", "-q", "-b", "main");
  gitIn(dir, "add", "-A");
  gitIn(dir, "commit", "-q", "--allow-empty", "-m", "base");
  return gitIn(dir, "rev-parse", "HEAD");
}

/** A git repository with src/sum.js (buggy) and a node:test that fails until it is fixed. */
export function makeSumRepo(root: string): string {
  const repo = path.join(root, "project");
  fs.mkdirSync(path.join(repo, "src"), { recursive: true });
  fs.mkdirSync(path.join(repo, "test"), { recursive: true });
  fs.writeFileSync(path.join(repo, "src/sum.js"), BUGGY_SUM);
  fs.writeFileSync(path.join(repo, "test/sum.test.js"), SUM_TEST);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
      cwd: repo,
      stdio: "ignore",
    });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  return repo;
}

export const reviewApprove = JSON.stringify({ decision: "approve", summary: "Looks right.", findings: [] });
export const reviewChanges = (message = "sum still subtracts") =>
  JSON.stringify({
    decision: "changes_requested",
    summary: "Not yet.",
    findings: [{ severity: "blocking", file: "src/sum.js", line: 2, message }],
  });
export const testPlan = (argv = ["node", "--test", "test/"]) => JSON.stringify({ summary: "Run the unit tests.", commands: [{ argv }] });

export type Script = Array<Record<string, unknown>>;

/** A session's task state as the tests read it: with its outcome (null until it finishes) whatever its status. */
export type TaskView = FinishedTask | ((NoTask | ActiveTask) & { outcome: null });

export interface Harness {
  repo: string;
  workspacesRoot: string;
  project(id: string, agents: Record<string, Script | Record<string, unknown>>, extra?: Partial<TProjectInput>): Promise<string>;
  /** `log` receives every runner log line (message and fields); `overrides` replace the harness's runner options. */
  startRunner(log?: (line: string) => void, overrides?: Partial<RunnerOptions>): Promise<Runner>;
  /** This harness's runners' process ledgers (what a killed runner left running is found there). */
  stateDir: string;
  state(sessionId: string): Promise<TaskView>;
  waitFor(sessionId: string, what: string, predicate: (s: TaskView) => boolean, timeoutMs?: number): Promise<TaskView>;
}

export function createHarness(db: TestDatabase): Harness {
  const root = tempDir("catcafe-tasks-");
  // Agent scripts written here are named on their command line: the sandbox shows such a file
  // only where any user of the host could read it.
  fs.chmodSync(root, 0o755);
  const repo = makeSumRepo(root);
  const workspacesRoot = path.join(root, "workspaces");
  const runners: Runner[] = [];
  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
  });
  const harness: Harness = {
    repo,
    workspacesRoot,
    async project(id, agents, extra = {}) {
      await upsertProject(db.pool, {
        id,
        name: `Project ${id}`,
        repoPath: repo,
        allowlist: [["node", "--test", "**"]],
        agents: Object.fromEntries(
          Object.entries(agents).map(([role, a]) => [role, Array.isArray(a) ? { kind: "scripted", id: `${role}-sim`, responses: a } : a]),
        ) as TProjectInput["agents"],
        ...extra,
      });
      return id;
    },
    stateDir: path.join(root, "runners"),
    async startRunner(log, overrides = {}) {
      const pool = createPool(db.url, 8);
      const store = createAppEventStore(pool);
      const stepKinds = stepKindRegistry(
        appStepKinds({
          pool,
          store,
          workspacesRoot,
          // A runner "host" of its own (docs/scaling.md): the worktrees it creates are recorded on it.
          ...(overrides.host ? { host: overrides.host } : {}),
          webhook: { webhookFor: (id) => webhookTarget(pool, store, id), publicUrl: "http://catcafe.test", requestTimeoutMs: 1_000 },
        }),
      );
      const runner = new Runner(store, pool, db.url, {
        executors: stepKinds.executors,
        react: stepKinds.react,
        onReactionError: stepKinds.onReactionError,
        retryBaseMs: 100,
        leaseMs: 5_000,
        stateDir: harness.stateDir,
        ...(log ? { log: (msg: string, fields?: Record<string, unknown>) => log(`${msg} ${JSON.stringify(fields ?? {})}`) } : {}),
        ...overrides,
      });
      await runner.start();
      runners.push(runner);
      return runner;
    },
    async state(sessionId) {
      const state = foldTask(await db.store.readStream(sessionId));
      return state.status === "finished" ? state : { ...state, outcome: null };
    },
    async waitFor(sessionId, what, predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = await harness.state(sessionId);
        if (predicate(s)) return s;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}; session is in "${s.fsm}" (${s.status}, outcome ${s.outcome})`);
        await new Promise((r) => setTimeout(r, 30));
      }
    },
  };
  return harness;
}
