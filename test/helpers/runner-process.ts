// A runner process (server/runner/main.ts) on a test database: what a kill -9 can really
// kill. Each is killed (SIGKILL) when the test file ends, if it is still running.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll } from "vitest";

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

export interface RunnerProcessOptions {
  databaseUrl: string;
  id: string;
  stateDir: string;
  /** The harness's workspaces (unset: the runner's default). */
  workspacesRoot?: string;
  leaseMs?: number;
  reclaimBackoffMs?: number;
  /** Extra environment, over the defaults. */
  env?: Record<string, string>;
}

export function spawnRunnerProcess(options: RunnerProcessOptions): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve("server/runner/main.ts")], {
    env: {
      NODE_ENV: "test",
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: options.databaseUrl,
      CATCAFE_RUNNER_ID: options.id,
      CATCAFE_RUNNER_STATE_DIR: options.stateDir,
      CATCAFE_RUNNER_LEASE_MS: String(options.leaseMs ?? 1000),
      CATCAFE_RUNNER_RECLAIM_BACKOFF_MS: String(options.reclaimBackoffMs ?? 200),
      CATCAFE_RUNNER_DETECT_SHELLS: "0",
      CATCAFE_LOG_LEVEL: "warn",
      ...(options.workspacesRoot ? { CATCAFE_WORKSPACES_DIR: options.workspacesRoot } : {}),
      ...options.env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.push(child);
  return child;
}
