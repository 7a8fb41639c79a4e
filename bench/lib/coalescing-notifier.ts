// A doorbell outside the writers' transactions, for comparison only (the store does not
// work this way): writers ring after their commit and go on; one dedicated connection
// sends the NOTIFYs of every stream rung since its last send in one transaction, so the
// commit-time NOTIFY lock is taken once per batch instead of once per writer transaction.
// (A crash between a commit and its ring loses the ring: listeners would need a fallback.)
import pg from "pg";

export interface CoalescingNotifier {
  ring(streamId: string): void;
  /** Transactions sent so far (each with every stream rung since the previous one). */
  sends(): number;
  /** Sends what is pending, then closes the connection. */
  close(): Promise<void>;
}

export async function openCoalescingNotifier(url: string, channel: string): Promise<CoalescingNotifier> {
  const client = new pg.Client({ connectionString: url, application_name: "bench-notifier" });
  client.on("error", () => {});
  await client.connect();
  let pending = new Set<string>();
  let sending: Promise<void> | null = null;
  let sent = 0;
  const flush = async () => {
    while (pending.size > 0) {
      const ids = [...pending];
      pending = new Set();
      await client.query(`SELECT pg_notify($1, id) FROM unnest($2::text[]) id`, [channel, ids]);
      sent++;
    }
    sending = null;
  };
  return {
    ring(streamId) {
      pending.add(streamId);
      sending ??= flush();
    },
    sends: () => sent,
    async close() {
      await sending;
      await client.end().catch(() => {});
    },
  };
}
