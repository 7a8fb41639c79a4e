// One `LISTEN catcafe_events` connection per web process, fanned out to every live
// session view: the event store NOTIFYs the stream id after each committed append, and
// only the subscribers of that stream are woken. Browsers never get a database connection
// of their own. A lost connection is re-established in the background, and every
// subscriber is then woken once (it re-reads from its last version, so nothing is missed).
import pg from "pg";
import { EVENTS_CHANNEL } from "../../events/store";

export interface ListenerOptions {
  /** Close the connection after this long without subscribers. */
  idleCloseMs?: number;
  reconnectMs?: number;
}

type Wake = () => void;

/** Subscribing to this "stream" wakes on every append, whatever the stream (the attention inbox). */
export const ANY_STREAM = "*";

export class SessionEventsListener {
  private ready: Promise<pg.Client> | null = null;
  private client: pg.Client | null = null;
  private readonly subscribers = new Map<string, Set<Wake>>();
  private idleTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly idleCloseMs: number;
  private readonly reconnectMs: number;

  constructor(
    private readonly newClient: () => pg.Client,
    options: ListenerOptions = {},
  ) {
    this.idleCloseMs = options.idleCloseMs ?? 30_000;
    this.reconnectMs = options.reconnectMs ?? 1_000;
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
    if (!set) this.subscribers.set(streamId, (set = new Set()));
    set.add(wake);
    this.cancelIdleClose();
    const unsubscribe = () => {
      const current = this.subscribers.get(streamId);
      if (!current?.delete(wake)) return;
      if (current.size === 0) this.subscribers.delete(streamId);
      if (this.subscribers.size === 0) this.scheduleIdleClose();
    };
    try {
      await this.connect();
    } catch (err) {
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancelIdleClose();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.disconnect();
  }

  private connect(): Promise<pg.Client> {
    this.ready ??= (async () => {
      const client = this.newClient();
      client.on("notification", (n) => {
        if (n.channel === EVENTS_CHANNEL && n.payload) this.wake(n.payload);
      });
      client.on("error", () => this.lost(client));
      client.on("end", () => this.lost(client));
      try {
        await client.connect();
        await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      } catch (err) {
        client.end().catch(() => {});
        throw err;
      }
      this.client = client;
      return client;
    })().catch((err: unknown) => {
      this.ready = null;
      throw err;
    });
    return this.ready;
  }

  private wake(streamId: string): void {
    for (const wake of this.subscribers.get(streamId) ?? []) wake();
    for (const wake of this.subscribers.get(ANY_STREAM) ?? []) wake();
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
    const pending = this.ready;
    this.ready = null;
    this.client = null;
    const client = await pending?.catch(() => null);
    await client?.end().catch(() => {});
  }
}

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
