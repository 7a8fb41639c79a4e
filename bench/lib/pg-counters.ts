// What PostgreSQL did during a measured window: statements executed (pg_stat_statements,
// top-level statements as clients sent them, BEGIN/COMMIT included since track_utility is
// on), WAL written (pg_current_wal_lsn), and the CPU of the server's processes (/proc).
// The bench's own control queries run on a connection that pg_stat_statements ignores.
import pg from "pg";
import { parentPid, postgresCpuMs } from "./proc-cpu";

export interface StatementCount {
  query: string;
  calls: number;
}

export interface WindowCounters {
  statements: number;
  /** Statements other than BEGIN, COMMIT, ROLLBACK and SAVEPOINTs. */
  statementsWithoutTxControl: number;
  walBytes: number;
  postgresCpuMs: number;
  /** The most frequent statements, most calls first. */
  top: StatementCount[];
}

const TX_CONTROL = /^\s*(begin|commit|rollback|start transaction|savepoint|release)\b/i;

/**
 * A VACUUM, then a CHECKPOINT: what earlier work left to clean (the other system's rows too,
 * an earlier measure's) is cleaned now, and the dirty pages written now, not by an autovacuum
 * and a checkpoint whose CPU and I/O would land in the next measured window.
 */
export async function settleDatabase(db: Pick<pg.ClientBase, "query">): Promise<void> {
  await db.query("VACUUM");
  await db.query("CHECKPOINT");
}

export class PgCounters {
  private constructor(
    private readonly control: pg.Client,
    private readonly postmasterPid: number,
  ) {}

  /** Turns statement tracking on for every connection opened from now on, but this control one. */
  static async open(url: string): Promise<PgCounters> {
    const control = new pg.Client({ connectionString: url, application_name: "bench-control" });
    await control.connect();
    try {
      await control.query("SET pg_stat_statements.track = 'none'");
      await control.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      // Per database: it overrides the server's command line (postgresql.auto.conf would not),
      // for connections opened from now on (the worker processes' and pools' opened later).
      await control.query(`ALTER DATABASE ${control.escapeIdentifier(control.database!)} SET pg_stat_statements.track = 'top'`);
      const backend = (await control.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      return new PgCounters(control, parentPid(backend));
    } catch (err) {
      await control.end().catch(() => {});
      throw err;
    }
  }

  /** Starts a window: statement counts reset, WAL position and server CPU noted. */
  async begin(): Promise<() => Promise<WindowCounters>> {
    await this.control.query("SELECT pg_stat_statements_reset()");
    const lsn = (await this.control.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0]!.lsn;
    const cpu = postgresCpuMs(this.postmasterPid);
    return async () => {
      const cpuAfter = postgresCpuMs(this.postmasterPid);
      const wal = await this.control.query<{ bytes: string }>("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS bytes", [
        lsn,
      ]);
      const rows = (
        await this.control.query<{ query: string; calls: string }>(
          `SELECT query, calls::text FROM pg_stat_statements
           WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY calls DESC`,
        )
      ).rows.map((r) => ({ query: r.query.replace(/\s+/g, " ").trim(), calls: Number(r.calls) }));
      const statements = rows.reduce((s, r) => s + r.calls, 0);
      return {
        statements,
        statementsWithoutTxControl: rows.filter((r) => !TX_CONTROL.test(r.query)).reduce((s, r) => s + r.calls, 0),
        walBytes: Number(wal.rows[0]!.bytes),
        postgresCpuMs: cpuAfter - cpu,
        top: rows.slice(0, 12),
      };
    };
  }

  /**
   * A vacuum and a checkpoint: call it before the work to be measured is written (scheduled), so that the
   * full-page images that follow every checkpoint are paid there, as they would be by work
   * queued a while ago, and not at random in some windows only.
   */
  async checkpoint(): Promise<void> {
    await settleDatabase(this.control);
  }

  /** The control connection, for the bench's own queries (not counted). */
  get connection(): pg.Client {
    return this.control;
  }

  /** Turns statement tracking off again and closes the control connection. */
  async close(): Promise<void> {
    await this.control
      .query(`ALTER DATABASE ${this.control.escapeIdentifier(this.control.database!)} RESET pg_stat_statements.track`)
      .catch(() => {});
    await this.control.end().catch(() => {});
  }
}
