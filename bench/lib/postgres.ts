// The benchmark's own embedded PostgreSQL: a fresh cluster in a temp dir on a free port,
// with the server's DEFAULT durability (fsync and synchronous_commit on, unlike the tests),
// a fresh database with every migration applied, and a stop() that removes it all.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startEmbeddedPostgres, type RunningPostgres } from "../../server/db/embedded";
import { migrate } from "../../server/db/migrate";
import { freePort } from "../../server/net/free-port";

export const BENCH_DATABASE = "catcafe_bench";

/** Loaded at start (it cannot be loaded later), off until a measurement turns it on (./pg-counters.ts). */
const STATEMENT_STATS_SETTINGS = { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "none" };

export interface BenchPostgres {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** `settings`: more server settings (the scale run sizes max_connections to its pools). */
export async function startBenchPostgres(log: (line: string) => void, settings: Record<string, string> = {}): Promise<BenchPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-pg-"));
  fs.chmodSync(dir, 0o755); // initdb may run as another user when we are root
  const dataDir = path.join(dir, "data");
  let server: RunningPostgres | null = null;
  let stopped = false;
  // Last resort when the process exits without stop() (a crash, a signal): an exit handler
  // cannot wait, so stop the server the hard way (SIGQUIT to the postmaster) and drop the dir.
  const onExit = () => {
    try {
      const pid = Number.parseInt(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0] ?? "", 10);
      if (pid > 0) process.kill(pid, "SIGQUIT");
    } catch {
      // no server running
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.on("exit", onExit);
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      await server?.stop();
    } finally {
      process.off("exit", onExit);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    // Durability stays at the server defaults on purpose. pg_stat_statements is loaded for
    // the measurements that count statements; it tracks nothing until one turns it on.
    server = await startEmbeddedPostgres({
      dataDir,
      port: await freePort(),
      password: crypto.randomBytes(12).toString("hex"),
      log,
      settings: { ...STATEMENT_STATS_SETTINGS, ...settings },
    });
    await server.createDatabase(BENCH_DATABASE);
    const url = server.urlFor(BENCH_DATABASE);
    await migrate(url, log);
    return { url, dataDir, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}
