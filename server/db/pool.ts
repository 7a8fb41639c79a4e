// The pg pool used by the event store and the runner (raw SQL where Postgres features
// matter: SKIP LOCKED, LISTEN/NOTIFY, xid snapshots). Prisma shares the same database.
import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";

export type Db = pg.Pool;
export type Tx = pg.PoolClient;
export type Queryable = pg.Pool | pg.PoolClient;

export interface PoolOptions {
  applicationName?: string;
  /** Fail a connection attempt after this long instead of hanging on TCP timeouts. */
  connectTimeoutMs?: number;
}

/**
 * The pools whose transaction the current async context is inside (withTransaction). Work
 * inside a transaction that takes a second connection from the same pool deadlocks once the
 * pool is exhausted: every connection held by a transaction waiting for one more, or by a
 * statement waiting for those transactions' row locks (a runner wedged so in CI: a finished
 * session's auto delivery read the server's settings through the pool). With CATCAFE_POOL_CHECKS=1
 * (the tests set it) such a second connection is refused at once, naming the mistake.
 */
const openTransactions = new AsyncLocalStorage<readonly OpenTransaction[]>();
/** Closed when the transaction ends: work it started that runs later (a timer) runs outside it. */
interface OpenTransaction {
  pool: pg.Pool;
  open: boolean;
}

export class NestedPoolUseError extends Error {
  constructor() {
    super(
      "a connection was asked of the pool inside a transaction on that pool: use the transaction's client (a second connection deadlocks when the pool is exhausted)",
    );
    this.name = "NestedPoolUseError";
  }
}

const refused: string[] = [];

/** The nested uses refused since the last call (their stacks), and forgets them: a test run asserts there were none. */
export function takeNestedPoolUses(): string[] {
  return refused.splice(0);
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

/** Makes `pool` refuse a connection to work inside one of its own transactions (its query asks through connect too). */
function checkNestedUse(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as (cb?: ConnectCallback) => Promise<pg.PoolClient> | undefined;
  pool.connect = ((cb?: ConnectCallback) => {
    if (!openTransactions.getStore()?.some((t) => t.open && t.pool === pool)) return connect(cb);
    const err = new NestedPoolUseError();
    // Recorded as well as thrown: a caller may swallow the error (auto delivery logs it).
    refused.push(err.stack ?? err.message);
    if (!cb) return Promise.reject(err);
    process.nextTick(() => cb(err, undefined, () => {}));
  }) as pg.Pool["connect"];
}

/** Read once: `withTransaction` is on every step's path, and the setting does not change while the process runs. */
const POOL_CHECKS = process.env.CATCAFE_POOL_CHECKS === "1";

export function createPool(connectionString: string, max = 10, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: options.applicationName ?? "catcafe",
    connectionTimeoutMillis: options.connectTimeoutMs ?? 0,
    // A client sends each query as soon as it is issued instead of after the previous reply:
    // a transaction's BEGIN travels with its first statement (withTransaction). Replies
    // still come in order, and each query keeps its own Sync, so an error ends only its own.
    pipeline: true,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  if (POOL_CHECKS) checkNestedUse(pool);
  return pool;
}

export interface TransactionOptions {
  /**
   * Issued on the transaction's connection right after its COMMIT, without waiting for the
   * COMMIT's reply (the pool pipelines), once `fn` succeeded: the next piece of independent
   * work, one round trip sooner (a runner's next claim). It runs in a transaction of its own,
   * whether or not the COMMIT succeeds; it handles its own errors. Awaited before the
   * connection goes back to the pool.
   */
  behind?: (db: pg.PoolClient) => Promise<void>;
}

/** Runs `fn` in a transaction on a dedicated client; rolls back on any error. */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (tx: pg.PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = await pool.connect();
  // A checked-out client whose connection dies (server restart, terminated backend) emits
  // 'error'; without a listener that would crash the process instead of failing this call.
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken = err;
  };
  client.on("error", onError);
  let behind: Promise<void> | undefined;
  try {
    // Not awaited before `fn`: on a pipelining client (createPool's) BEGIN goes out with the
    // transaction's first statement, one round trip for both (docs/architecture.md, "Round trips": a step's result was
    // three). BEGIN fails only with its connection, and then so does every statement after it;
    // its reply is checked before COMMIT all the same.
    const begun = client.query("BEGIN");
    begun.catch(() => {}); // awaited below; this only keeps an early failure of `fn` from leaving it unhandled
    const result = POOL_CHECKS ? await insideTransaction(pool, () => fn(client)) : await fn(client);
    await begun;
    const committed = client.query("COMMIT");
    behind = options.behind?.(client);
    await committed;
    return result;
  } catch (err) {
    if (!broken) await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    await behind?.catch(() => {});
    client.off("error", onError);
    // A broken client is discarded by the pool rather than handed out again.
    client.release(broken);
  }
}

async function insideTransaction<T>(pool: pg.Pool, fn: () => Promise<T>): Promise<T> {
  const mine: OpenTransaction = { pool, open: true };
  try {
    return await openTransactions.run([...(openTransactions.getStore() ?? []), mine], fn);
  } finally {
    mine.open = false;
  }
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"]);

/**
 * Prisma's codes for a database it cannot reach or lost: P1001 cannot reach, P1002 timed out,
 * P1017 the server closed the connection, P2024 no pooled connection within the wait.
 */
const PRISMA_CONNECTION_CODES = new Set(["P1001", "P1002", "P1017", "P2024"]);
/** What Prisma's PostgreSQL adapter (@prisma/adapter-pg) makes of a socket error or a full server. */
const ADAPTER_CONNECTION_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);

/**
 * True when `err` says the database could not be reached or the connection broke, as
 * opposed to a query's own fault: SQLSTATE class 08, admin/crash shutdown and "cannot
 * connect now" (57P01-57P03), too many connections (53300), socket errors, and pg's own
 * messages for a dead or timed-out connection. Such work is retried, not failed. Prisma's
 * errors say the same in their own codes, or carry the driver's error as
 * `meta.driverAdapterError.cause` (a PostgreSQL code, or a kind such as DatabaseNotReachable).
 */
export function isConnectionError(err: unknown): boolean {
  const e = err as {
    code?: unknown;
    message?: unknown;
    meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown } } };
  } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  if (/^08|^57P0[123]$|^53300$/.test(code) || CONNECTION_CODES.has(code) || PRISMA_CONNECTION_CODES.has(code)) return true;
  const driver = e?.meta?.driverAdapterError?.cause;
  if (
    driver &&
    (ADAPTER_CONNECTION_KINDS.has(String(driver.kind)) || (driver.kind === "postgres" && isConnectionError({ code: driver.code })))
  )
    return true;
  const message = typeof e?.message === "string" ? e.message : "";
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|the database system is (?:starting up|shutting down)/i.test(
    message,
  );
}
