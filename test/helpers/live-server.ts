// A live Cat Cafe for tests that talk to it as a client would (the CLI, the example
// scripts): `npm start` on a fresh data directory (embedded PostgreSQL, migrations, web
// server, one runner, the demo project with its proposal task) with an admin from
// ADMIN_EMAIL / ADMIN_PASSWORD, and a stop that leaves no process and no file behind.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./ports";
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
} from "./processes";
import { ensureWebBuild, WEB_BUILD_TIMEOUT_MS } from "./web-build";

export const ROOT = path.resolve(import.meta.dirname, "../..");
const START_TIMEOUT_MS = 90_000;
const DEMO_LINE = /\[catcafe\] demo: created project "demo" and a proposal task waiting for your confirm: (s-[0-9a-f]+)[;\n]/;

/** Time for beforeAll: a build (when the code changed) plus a start. */
export const LIVE_SERVER_TIMEOUT_MS = WEB_BUILD_TIMEOUT_MS + START_TIMEOUT_MS + 30_000;

export interface LiveServer {
  url: string;
  dataDir: string;
  admin: { email: string; password: string };
  /** The demo's proposal task, started by `npm start`. */
  demoSessionId: string;
  /** Started without an admin (`firstRun`): the one-time link `npm start` printed to create one. */
  setupUrl: string | null;
  process: StartedProcess;
  stop(): Promise<void>;
}

/** The environment of a user's shell: none of the test runner's settings, no database. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
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
    "ADMIN_EMAIL",
    "ADMIN_PASSWORD",
  ]) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

const SETUP_LINE = /create the first admin at (\S+)/;

/**
 * `extraEnv`: more settings for the server (a small web pool, say). `firstRun`: no
 * ADMIN_EMAIL / ADMIN_PASSWORD, as a team's first `npm start`: the admin is made in the
 * browser from `setupUrl`.
 */
export async function startLiveServer(
  label: string,
  extraEnv: Record<string, string> = {},
  options: { firstRun?: boolean } = {},
): Promise<LiveServer> {
  await ensureWebBuild();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `catcafe-${label}-`));
  const port = await freePort();
  const admin = {
    email: `admin-${crypto.randomBytes(4).toString("hex")}@cats.test`,
    password: `pw-${crypto.randomBytes(12).toString("base64url")}`,
  };
  const env = cleanEnv({
    CATCAFE_DATA_DIR: dataDir,
    PORT: String(port),
    CATCAFE_PG_PORT: String(await freePort()),
    CATCAFE_LOG_LEVEL: "info",
    ...(options.firstRun ? {} : { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password }),
    ...extraEnv,
  });
  // Its own process group, like a job a terminal started: stop() signals the whole group.
  const proc = startProcess(process.execPath, ["--import", "tsx", "scripts/start.ts"], { cwd: ROOT, env, detached: true });

  const stop = async () => {
    try {
      process.kill(-proc.pid, "SIGINT");
      await waitForExit(proc, 30_000);
    } catch {
      killTree(proc.pid);
    }
    for (const p of processesMentioning(dataDir)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await waitUntil(() => processesMentioning(dataDir).length === 0, 15_000, `no process mentions ${dataDir}`).catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    await waitForOutput(proc, DEMO_LINE, START_TIMEOUT_MS);
    await waitForOutput(proc, /\[catcafe\] ready: /, START_TIMEOUT_MS);
    await waitForHealth(`http://127.0.0.1:${port}/api/health`, proc, { minRunners: 1, timeoutMs: 15_000 });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    admin,
    demoSessionId: DEMO_LINE.exec(proc.output())![1]!,
    setupUrl: options.firstRun ? (SETUP_LINE.exec(proc.output())?.[1] ?? null) : null,
    process: proc,
    stop,
  };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end with its output captured (stdin: `input`, or nothing). */
export function run(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `${command} ${args.join(" ")} did not finish within ${options.timeoutMs ?? 60_000} ms\nstdout:\n${tail(stdout)}\nstderr:\n${tail(stderr)}`,
        ),
      );
    }, options.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}
