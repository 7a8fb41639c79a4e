// One `LISTEN catcafe_events` connection per web process, fanned out to every live
// session view: the event store NOTIFYs the stream id after each committed append to a
// stream someone watches, and only the subscribers of that stream are woken. Browsers
// never get a database connection of their own. A lost connection is re-established in
// the background, and every subscriber is then woken once (it re-reads from its last
// version, so nothing is missed).
//
// Watching is declared in `live_interest` (one row per stream and web process, refreshed
// while watched, deleted when the last view of it closes): appends to streams nobody
// watches send no NOTIFY, so they never queue on its commit lock (docs/architecture.md). An append
// whose statement began before a new row was committed may not see it; its commit is
// caught by one extra wake shortly after subscribing, and, for transactions that run
// longer than that, by the wake every refresh.
import crypto from "node:crypto";
import pg from "pg";
import { EVENTS_CHANNEL } from "../../events/store";

export interface ListenerOptions {
  /** Close the connection after this long without subscribers. */
  idleCloseMs?: number;
  reconnectMs?: number;
  /** How often the watched streams' rows are refreshed (and every subscriber woken once). */
  refreshMs?: number;
}

type Wake = () => void;

/** Subscribing to this key wakes on every change to a sessions row (state, attention, an acknowledgement): the inbox. */
export const SESSION_CHANGES = "*sessions";
/** The channel the sessions table's trigger rings (migration 20261126085841). */
export const SESSIONS_CHANNEL = "catcafe_sessions";

/** A row lives this many refreshes: a process that died leaves its rows to expire. */
const INTEREST_LIFETIME_REFRESHES = 3;
/** The extra wake after a new stream's row is committed (appends already in flight when it was). */
const LATE_COMMIT_WAKE_MS = 250;

export class SessionEventsListener {
  private ready: Promise<pg.Client> | null = null;
  private client: pg.Client | null = null;
  private readonly subscribers = new Map<string, Set<Wake>>();
  private idleTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private refreshTimer: NodeJS.Timeout | null = null;
  private readonly idleCloseMs: number;
  private readonly reconnectMs: number;
  private readonly refreshMs: number;
  /** This process's rows in `live_interest`. */
  readonly listenerId = crypto.randomUUID();

  constructor(
    private readonly newClient: () => pg.Client,
    options: ListenerOptions = {},
  ) {
    this.idleCloseMs = options.idleCloseMs ?? 30_000;
    this.reconnectMs = options.reconnectMs ?? 1_000;
    this.refreshMs = options.refreshMs ?? 20_000;
  }

  /** How many subscriptions are open, over all streams. */
  get size(): number {
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  /**
   * Calls `wake` after every commit that appended to `streamId` (and after a reconnect).
   * Resolves once the connection listens, so a read made afterwards cannot miss an event;
   * the returned function unsubscribes.
   */
  async subscribe(streamId: string, wake: Wake): Promise<() => void> {
    if (this.closed) throw new Error("the session events listener is closed");
    let set = this.subscribers.get(streamId);
    const first = !set;
    if (!set) this.subscribers.set(streamId, (set = new Set()));
    set.add(wake);
    this.cancelIdleClose();
    const unsubscribe = () => {
      const current = this.subscribers.get(streamId);
      if (!current?.delete(wake)) return;
      if (current.size === 0) {
        this.subscribers.delete(streamId);
        if (streamId !== SESSION_CHANGES) void this.client?.query(FORGET_SQL, [streamId, this.listenerId]).catch(() => {});
      }
      if (this.subscribers.size === 0) this.scheduleIdleClose();
    };
    try {
      const client = await this.connect();
      if (streamId !== SESSION_CHANGES) {
        // Declared before the caller reads the stream: every append from then on rings.
        await client.query(WATCH_SQL, [[streamId], this.listenerId, this.lifetimeMs]);
        if (first) setTimeout(() => this.wakeStream(streamId), LATE_COMMIT_WAKE_MS).unref?.();
      }
    } catch (err) {
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  /** The streams watched here now (their rows in `live_interest`). */
  get watchedStreams(): string[] {
    return [...this.subscribers.keys()].filter((id) => id !== SESSION_CHANGES);
  }

  private get lifetimeMs(): number {
    return this.refreshMs * INTEREST_LIFETIME_REFRESHES;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancelIdleClose();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.disconnect();
  }

  /** Keeps this process's rows alive (re-creating any that expired), and wakes every subscriber once. */
  private async refresh(): Promise<void> {
    const client = this.client;
    if (!client) return;
    await client.query(WATCH_SQL, [this.watchedStreams, this.listenerId, this.lifetimeMs]).catch(() => {});
    this.wakeAll();
  }

  private connect(): Promise<pg.Client> {
    this.ready ??= (async () => {
      const client = this.newClient();
      client.on("notification", (n) => {
        if (n.channel === EVENTS_CHANNEL && n.payload) this.wakeStream(n.payload);
        else if (n.channel === SESSIONS_CHANNEL) this.wakeStream(SESSION_CHANGES);
      });
      client.on("error", () => this.lost(client));
      client.on("end", () => this.lost(client));
      try {
        await client.connect();
        // This connection writes only `live_interest` rows, which a crash may lose (this
        // connection goes with it, and its reconnect declares them again): their commits wait
        // for no flush, so a fresh view's set-up does not either (docs/scaling.md, "First
        // output and live paint"). A commit is visible to other transactions at once either way.
        await client.query(`SET synchronous_commit = off; LISTEN ${EVENTS_CHANNEL}; LISTEN ${SESSIONS_CHANNEL}`);
        // After a reconnect: the streams watched all along (their rows may have expired).
        await client.query(WATCH_SQL, [this.watchedStreams, this.listenerId, this.lifetimeMs]);
      } catch (err) {
        client.end().catch(() => {});
        throw err;
      }
      this.client = client;
      this.refreshTimer ??= setInterval(() => void this.refresh(), this.refreshMs);
      this.refreshTimer.unref?.();
      return client;
    })().catch((err: unknown) => {
      this.ready = null;
      throw err;
    });
    return this.ready;
  }

  private wakeStream(streamId: string): void {
    for (const wake of this.subscribers.get(streamId) ?? []) wake();
  }

  private wakeAll(): void {
    for (const set of this.subscribers.values()) for (const wake of set) wake();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.ready = null;
    client.end().catch(() => {});
    if (!this.closed && this.subscribers.size > 0) this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.closed || this.subscribers.size === 0) return;
      this.connect().then(
        () => this.wakeAll(),
        () => this.scheduleReconnect(),
      );
    }, this.reconnectMs);
    this.reconnectTimer.unref?.();
  }

  private scheduleIdleClose(): void {
    this.cancelIdleClose();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.subscribers.size === 0) void this.disconnect();
    }, this.idleCloseMs);
    this.idleTimer.unref?.();
  }

  private cancelIdleClose(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private async disconnect(): Promise<void> {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    this.refreshTimer = null;
    const pending = this.ready;
    this.ready = null;
    this.client = null;
    const client = await pending?.catch(() => null);
    await client?.query(FORGET_ALL_SQL, [this.listenerId]).catch(() => {});
    await client?.end().catch(() => {});
  }
}

/** Declares (or refreshes) this process's watch of streams $1; also drops rows long expired, whoever left them. */
const WATCH_SQL = `WITH gone AS (DELETE FROM live_interest WHERE expires_at < now() - interval '1 hour')
  INSERT INTO live_interest (stream_id, listener_id, expires_at)
  SELECT unnest($1::text[]), $2, now() + $3 * interval '1 millisecond'
  ON CONFLICT (stream_id, listener_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`;
const FORGET_SQL = "DELETE FROM live_interest WHERE stream_id = $1 AND listener_id = $2";
const FORGET_ALL_SQL = "DELETE FROM live_interest WHERE listener_id = $1";

const shared = globalThis as typeof globalThis & { __catcafeSessionListeners?: WeakMap<pg.Pool, SessionEventsListener> };

/** The process's one listener for the database behind `pool` (a connection of its own, same settings). */
export function sessionEventsListener(pool: pg.Pool): SessionEventsListener {
  shared.__catcafeSessionListeners ??= new WeakMap();
  let listener = shared.__catcafeSessionListeners.get(pool);
  if (!listener) {
    listener = new SessionEventsListener(() => new pg.Client({ ...pool.options, application_name: "catcafe-web-live" }));
    shared.__catcafeSessionListeners.set(pool, listener);
  }
  return listener;
}
