// `npm run runner`: one runner process against DATABASE_URL. Run as many as you like,
// on as many machines as you like. SIGTERM/SIGINT stop it gracefully.
import { createPool } from "../db/pool";
import { parseEnv, ZRunnerEnv } from "../env";
import { createAppEventStore } from "../app-store";
import { logger } from "../log";
import { APP_VERSION } from "../version";
import { detectShells } from "../agents/shells/detect";
import { workflowExecutors } from "./workflow-executors";
import { reactToStepOutcome } from "../workflow/reactor";
import { builtinExecutors } from "./executors";
import { Runner } from "./runner";

const env = parseEnv(ZRunnerEnv);
const pool = createPool(env.DATABASE_URL, env.CATCAFE_RUNNER_CONCURRENCY + 4);
const log = logger.child({ component: "runner" });
const store = createAppEventStore(pool);
const runner = new Runner(store, pool, env.DATABASE_URL, {
  id: env.CATCAFE_RUNNER_ID,
  version: APP_VERSION,
  leaseMs: env.CATCAFE_RUNNER_LEASE_MS,
  pollMs: env.CATCAFE_RUNNER_POLL_MS,
  concurrency: env.CATCAFE_RUNNER_CONCURRENCY,
  reclaimBackoffMs: env.CATCAFE_RUNNER_RECLAIM_BACKOFF_MS,
  shutdownGraceMs: env.CATCAFE_RUNNER_SHUTDOWN_GRACE_MS,
  executors: { ...builtinExecutors, ...workflowExecutors({ pool, store, workspacesRoot: env.CATCAFE_WORKSPACES_DIR }) },
  react: reactToStepOutcome,
  detectShells: () => detectShells(),
  log: (msg, fields) => log.info(fields ?? {}, msg),
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "runner shutting down");
  await runner.stop();
  await pool.end();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

try {
  await runner.start();
} catch (err) {
  log.error({ err: String(err) }, "runner failed to start");
  process.exit(1);
}
