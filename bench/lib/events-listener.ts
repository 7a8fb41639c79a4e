// A LISTEN connection on Cat Cafe's events channel, as the web server keeps one open in
// production (server/sessions/view/listener.ts), counting the notifications it receives:
// how many NOTIFYs the appends under measurement really send (PostgreSQL folds identical
// ones within a transaction, never across transactions).
import pg from "pg";
import { EVENTS_CHANNEL } from "../../server/events/store";
import { sleep } from "./timing";

export interface EventsListener {
  readonly channel: string;
  /** Notifications received on the channel so far. */
  received(): number;
  /** Waits until notifications from commits already done have arrived, then counts. */
  settledCount(): Promise<number>;
  /** UNLISTEN: the connection stays open, but no session listens on the channel. */
  pause(): Promise<void>;
  /** LISTEN again after pause(). */
  resume(): Promise<void>;
  close(): Promise<void>;
}

export async function openEventsListener(url: string): Promise<EventsListener> {
  const client = new pg.Client({ connectionString: url, application_name: "bench-events-listener" });
  client.on("error", () => {});
  await client.connect();
  let count = 0;
  client.on("notification", (n) => {
    if (n.channel === EVENTS_CHANNEL) count++;
  });
  await client.query(`LISTEN ${EVENTS_CHANNEL}`);
  return {
    channel: EVENTS_CHANNEL,
    received: () => count,
    async settledCount() {
      // A listener's backend forwards queued notifications when it goes idle; a round trip
      // on it (after a short pause for the writers' last signals) lets them all through.
      await sleep(50);
      await client.query("SELECT 1");
      return count;
    },
    pause: async () => {
      await client.query(`UNLISTEN ${EVENTS_CHANNEL}`);
    },
    resume: async () => {
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    },
    close: () => client.end().catch(() => {}),
  };
}
