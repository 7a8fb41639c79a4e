// `npm run runner`: one runner process against DATABASE_URL. Run as many as you like,
// on as many machines as you like. SIGTERM/SIGINT stop it gracefully.
// First, before any other module reads the environment: the web server's secrets out of it.
import { withheldAtStart } from "./withhold-secrets";
import { createPool, isConnectionError } from "../db/pool";
import { parseEnv, ZMetricsEnv, ZRunnerEnv } from "../env";
import { attachScrapeSources } from "../metrics/registry";
import { startMetricsServer, type MetricsServer } from "../metrics/server";
import { createAppEventStore } from "../app-store";
import { logger } from "../log";
import { APP_VERSION } from "../version";
import { detectShells } from "../agents/shells/detect";
import { appStepKinds } from "../app-runner";
import { webhookTarget } from "../projects/access";
import { listProjectRecords } from "../projects/projects";
import { projectsServed } from "./capabilities";
import { collectHostWorkspaces } from "../pruning/host-gc";
import { AUTO_PRUNE_INTERVAL_MS, pruneOnSchedule } from "../pruning/service";
import { DEAD_RUNNERS_KEPT_MS, forgetDeadRunners } from "./liveness";
import { runnerHost } from "./worktree-placement";
import { Runner } from "./runner";
import { stepKindRegistry } from "./step-kinds";
import { startTracing, stopTracing } from "../tracing/sdk";

const env = parseEnv(ZRunnerEnv);
const pool = createPool(env.DATABASE_URL, env.CATCAFE_RUNNER_CONCURRENCY + 4);
const log = logger.child({ component: "runner" });
// Traces only when an OTLP endpoint is set (docs/operations.md, "Traces").
if (startTracing("catcafe-runner")) log.info({}, "exporting traces over OTLP");
if (withheldAtStart.length) {
  // Out of process.env now, but still in /proc/<pid>/environ, readable by this user's processes.
  log.warn(
    { withheld: withheldAtStart },
    "started with the web server's secrets in its environment: taken out of it; start runners without them (docs/security.md)",
  );
}
const store = createAppEventStore(pool);
const host = runnerHost(env.CATCAFE_RUNNER_HOST);
// What this runner runs, and how outcomes are reacted to: the application's step kinds.
const repositoryPath = (repoPath: string) => env.CATCAFE_REPOSITORY_PATHS[repoPath] ?? repoPath;
const stepKinds = stepKindRegistry(
  appStepKinds({
    pool,
    store,
    workspacesRoot: env.CATCAFE_WORKSPACES_DIR,
    host,
    repositoryPath,
    webhook: { webhookFor: (projectId) => webhookTarget(pool, store, projectId), publicUrl: process.env.NEXTAUTH_URL },
  }),
);
const runner = new Runner(store, pool, env.DATABASE_URL, {
  id: env.CATCAFE_RUNNER_ID,
  host,
  version: APP_VERSION,
  leaseMs: env.CATCAFE_RUNNER_LEASE_MS,
  pollMs: env.CATCAFE_RUNNER_POLL_MS,
  concurrency: env.CATCAFE_RUNNER_CONCURRENCY,
  reclaimBackoffMs: env.CATCAFE_RUNNER_RECLAIM_BACKOFF_MS,
  shutdownGraceMs: env.CATCAFE_RUNNER_SHUTDOWN_GRACE_MS,
  executors: stepKinds.executors,
  react: stepKinds.react,
  onReactionError: stepKinds.onReactionError,
  stateDir: env.CATCAFE_RUNNER_STATE_DIR,
  // What it can run: clones of the registered projects, its labels (docs/scaling.md, "Which runner runs a step").
  projectsServed: async () => projectsServed(await listProjectRecords(pool), repositoryPath),
  labels: env.CATCAFE_RUNNER_LABELS,
  ...(env.CATCAFE_RUNNER_DETECT_SHELLS === "1" ? { detectShells: () => detectShells() } : {}),
  log: (msg, fields) => log.info(fields ?? {}, msg),
});

// /metrics of this runner (docs/operations.md, "Metrics"): only when CATCAFE_METRICS_PORT is set.
const metricsEnv = parseEnv(ZMetricsEnv);
attachScrapeSources({ pools: { runner: pool } });
let metricsServer: MetricsServer | null = null;
if (metricsEnv.CATCAFE_METRICS_PORT !== undefined) {
  metricsServer = await startMetricsServer({
    port: metricsEnv.CATCAFE_METRICS_PORT,
    host: metricsEnv.CATCAFE_METRICS_HOST,
    token: metricsEnv.CATCAFE_METRICS_TOKEN,
  });
  const { address, port } = metricsServer.address;
  log.info(
    { address, port, token: metricsEnv.CATCAFE_METRICS_TOKEN ? "required" : "none: loopback and private addresses only" },
    "metrics served at /metrics",
  );
}

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "runner shutting down");
  await runner.stop();
  await metricsServer?.close();
  await pool.end();
  // What is still buffered is exported before the process ends.
  await stopTracing();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

// Nothing the runner does in the background may take the process down: a lost database
// connection surfaces here at worst, and the runner's own loops retry it.
process.on("unhandledRejection", (err) => log.error({ err: String(err) }, "unhandled rejection (the runner goes on)"));
pool.on("error", (err) => log.warn({ err: String(err) }, "idle database connection lost"));

// The database may not be up yet (or be restarting): keep trying rather than exit.
for (let failures = 1; ; failures++) {
  try {
    await runner.start();
    break;
  } catch (err) {
    if (stopping) break;
    if (!isConnectionError(err)) {
      log.error({ err: String(err) }, "runner failed to start");
      process.exit(1);
    }
    log.warn({ err: String(err), failures }, "database unreachable at start; retrying");
    await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** failures, 5_000)));
  }
}

// The setting sessions.pruneFailedAfterDays (req F14, docs/operations.md "Cleaning up failed
// sessions"): every runner tries a pass each interval; the first to take the advisory lock
// does it, the others skip theirs. Then this host's own worktrees (a lock per host, so every
// host runs its own) and the rows of runners long dead.
async function prunePass(): Promise<void> {
  try {
    const pass = await pruneOnSchedule({ store, pool });
    if (pass.sessions.length || pass.skipped.length)
      log.info({ sessions: pass.sessions, skipped: pass.skipped }, "failed sessions' workspaces asked to be cleaned up");
  } catch (err) {
    log.warn({ err: String(err) }, "automatic clean-up of failed sessions did not run; it is tried again next interval");
  }
  // This host's own worktrees (docs/operations.md, "Worktrees on every host"): each host runs its pass.
  try {
    const gc = await collectHostWorkspaces({ store, pool, host, workspacesRoot: env.CATCAFE_WORKSPACES_DIR, repositoryPath });
    if (gc.removed.length || gc.failed.length)
      log.info({ host, removed: gc.removed, failed: gc.failed }, "this host's worktrees cleaned up");
  } catch (err) {
    log.warn({ err: String(err) }, "this host's worktree clean-up did not run; it is tried again next interval");
  }
  try {
    const forgotten = await forgetDeadRunners(pool, DEAD_RUNNERS_KEPT_MS);
    if (forgotten.length) log.info({ runners: forgotten }, "dead runners forgotten");
  } catch (err) {
    log.warn({ err: String(err) }, "dead runners were not forgotten; tried again next interval");
  }
}
setTimeout(() => void prunePass(), 60_000).unref();
setInterval(() => void prunePass(), AUTO_PRUNE_INTERVAL_MS).unref();
