// A runner as production runs it: a process of its own (server/runner/main.ts), its own pool,
// LISTEN/NOTIFY, the default sandbox. For measures of what a person waits for, so that the
// runner's process starts and event loop are not shared with the bench's browser driver.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./web-app";

export interface RunnerProcess {
  child: ChildProcess;
  /** SIGTERM, then SIGKILL after 10 s; resolves once it exited. */
  stop(): Promise<void>;
}

/** `env`: over the runner's defaults (e.g. `CATCAFE_RUNNER_CONCURRENCY`). Workspaces under `root`/workspaces, shared by all. */
export function startRunnerProcess(
  url: string,
  root: string,
  id: string,
  log: (line: string) => void,
  env: Record<string, string> = {},
): RunnerProcess {
  const stateDir = path.join(root, `runner-${id}`);
  fs.mkdirSync(stateDir, { recursive: true });
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "server/runner/main.ts")], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: "production",
      DATABASE_URL: url,
      CATCAFE_RUNNER_ID: id,
      CATCAFE_RUNNER_DETECT_SHELLS: "0",
      CATCAFE_RUNNER_STATE_DIR: stateDir,
      CATCAFE_WORKSPACES_DIR: path.join(root, "workspaces"),
      CATCAFE_LOG_LEVEL: "error",
      ...(process.env.CATCAFE_SANDBOX ? { CATCAFE_SANDBOX: process.env.CATCAFE_SANDBOX } : {}),
      // Traces, when the bench runs with an OTLP endpoint set: the runner's step and process
      // spans show where a step's time goes (docs/operations.md, "Traces").
      ...Object.fromEntries(
        Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith("OTEL_") && e[1] !== undefined),
      ),
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr!.on("data", (c: Buffer) => log(`runner ${id}: ${c.toString("utf8").trim().slice(0, 400)}`));
  return {
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
      }),
  };
}
