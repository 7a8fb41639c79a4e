// One clock for the browser measurements: `performance.timeOrigin + performance.now()`, a
// wall-clock anchored, monotonic, sub-millisecond time in the browser and in Node on the same
// machine. The two origins are each read from the system clock once, so they can disagree by
// a clock step between the two reads: the offset between them is measured (the best of many
// round trips, as NTP does), which leaves an error of at most half that round trip. Times the
// database or another process took from the system clock (`recorded_at`, `date +%s%N`) are
// put on the same clock by the system clock's offset from ours.
import { performance } from "node:perf_hooks";
import type pg from "pg";
import type { Page } from "playwright-core";

/** Wall-clock anchored, monotonic, sub-ms: the same reading as a page's marks. */
export const now = () => performance.timeOrigin + performance.now();

const PINGS = 30;

/** Browser clock minus ours, from the round trip with the least delay (error ≤ half of it). */
export async function pageClockOffset(page: Page): Promise<{ offsetMs: number; roundTripMs: number }> {
  let best = { offsetMs: 0, roundTripMs: Number.POSITIVE_INFINITY };
  for (let i = 0; i < PINGS; i++) {
    const sent = now();
    const theirs = await page.evaluate(() => performance.timeOrigin + performance.now());
    const back = now();
    if (back - sent < best.roundTripMs) best = { offsetMs: theirs - (sent + back) / 2, roundTripMs: back - sent };
  }
  return best;
}

/** PostgreSQL's clock (clock_timestamp(), what recorded_at is taken from) minus ours, as pageClockOffset. */
export async function databaseClockOffset(pool: pg.Pool): Promise<{ offsetMs: number; roundTripMs: number }> {
  const client = await pool.connect();
  try {
    let best = { offsetMs: 0, roundTripMs: Number.POSITIVE_INFINITY };
    for (let i = 0; i < PINGS; i++) {
      const sent = now();
      const { rows } = await client.query<{ ms: number }>("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms");
      const back = now();
      if (back - sent < best.roundTripMs) best = { offsetMs: rows[0]!.ms - (sent + back) / 2, roundTripMs: back - sent };
    }
    return best;
  } finally {
    client.release();
  }
}
