// The per-brain rate limit shared by every runner process (req R5), kept in the
// `brain_rate_limits` table and timed by the database clock, never a runner's.
//
// A caller takes the turn only when the brain is neither held nor inside its interval, in
// one atomic upsert. It holds the turn until the provider has answered the request (its
// response headers), then releases it: the next turn starts `minIntervalMs` after that
// release. Because a release happens after the provider received the request, consecutive
// calls reach the provider at least `minIntervalMs` apart, whatever the network and timer
// jitter. A holder that dies is waited for at most `holdMs`.
import crypto from "node:crypto";
import type { Db } from "../db/pool";
import { recordRateLimitWait } from "../metrics/registry";
import type { BrainCallGate, BrainTurn, BrainTurnRequest } from "./call";

/** How long a turn is held at most if its holder never releases it (a killed runner). */
export const DEFAULT_TURN_HOLD_MS = 30_000;
/** Shortest pause between two attempts to take a turn. */
const MIN_POLL_MS = 5;

export interface BrainKey {
  brainId: string;
  baseUrl: string;
}

export type TurnAttempt = { granted: true; holder: string } | { granted: false; retryInMs: number };

/** Takes the turn if it is free now; otherwise says how long until it may be. */
export async function tryTakeTurn(db: Db, key: BrainKey, minIntervalMs: number, holdMs = DEFAULT_TURN_HOLD_MS): Promise<TurnAttempt> {
  const holder = crypto.randomUUID();
  const taken = await db.query({
    name: "catcafe_brain_turn_take",
    text: `INSERT INTO brain_rate_limits AS l (brain_id, base_url, next_allowed_at, holder, held_until, updated_at)
           VALUES ($1, $2, clock_timestamp(), $3, clock_timestamp() + $4 * interval '1 millisecond', clock_timestamp())
           ON CONFLICT (brain_id, base_url) DO UPDATE
             SET holder = EXCLUDED.holder, held_until = EXCLUDED.held_until, updated_at = EXCLUDED.updated_at
             WHERE l.next_allowed_at <= clock_timestamp() AND (l.held_until IS NULL OR l.held_until <= clock_timestamp())
           RETURNING 1`,
    values: [key.brainId, key.baseUrl, holder, holdMs],
  });
  if (taken.rowCount === 1) return { granted: true, holder };
  // While held, the release sets the next turn an interval past a moment still to come.
  const wait = await db.query<{ wait_ms: number | null }>({
    name: "catcafe_brain_turn_wait",
    text: `SELECT (CASE WHEN held_until > clock_timestamp()
                        THEN LEAST(extract(epoch FROM held_until - clock_timestamp()) * 1000,
                                   GREATEST($3::float8, extract(epoch FROM next_allowed_at - clock_timestamp()) * 1000))
                        ELSE extract(epoch FROM next_allowed_at - clock_timestamp()) * 1000 END)::float8 AS wait_ms
           FROM brain_rate_limits WHERE brain_id = $1 AND base_url = $2`,
    values: [key.brainId, key.baseUrl, minIntervalMs],
  });
  return { granted: false, retryInMs: Math.max(MIN_POLL_MS, Math.ceil(wait.rows[0]?.wait_ms ?? 0)) };
}

/** Ends a turn: the next one may start `minIntervalMs` (or `notBeforeMs`, if longer) from now. */
export async function releaseTurn(db: Db, key: BrainKey, holder: string, minIntervalMs: number, notBeforeMs = 0): Promise<void> {
  await db.query({
    name: "catcafe_brain_turn_release",
    text: `UPDATE brain_rate_limits
           SET next_allowed_at = GREATEST(next_allowed_at, clock_timestamp() + $4 * interval '1 millisecond'),
               holder = NULL, held_until = NULL, updated_at = clock_timestamp()
           WHERE brain_id = $1 AND base_url = $2 AND holder = $3`,
    values: [key.brainId, key.baseUrl, holder, Math.max(minIntervalMs, notBeforeMs)],
  });
}

export interface WaitForTurnOptions {
  minIntervalMs: number;
  signal: AbortSignal;
  holdMs?: number;
}

export interface GrantedTurn extends BrainTurn {
  /** How long the caller waited for it (0 when the brain was free). */
  waitedMs: number;
}

/** Waits (abortably) until the turn is taken. */
export async function waitForTurn(db: Db, key: BrainKey, options: WaitForTurnOptions): Promise<GrantedTurn> {
  const startedAt = performance.now();
  let waited = false;
  for (;;) {
    if (options.signal.aborted) throw options.signal.reason;
    const attempt = await tryTakeTurn(db, key, options.minIntervalMs, options.holdMs);
    if (attempt.granted) {
      let done: Promise<void> | null = null;
      return {
        waitedMs: waited ? Math.round(performance.now() - startedAt) : 0,
        release: (o) =>
          (done ??= releaseTurn(db, key, attempt.holder, options.minIntervalMs, o?.notBeforeMs).catch(() => {
            // The hold then lapses after holdMs: later calls wait longer, none goes early.
          })),
      };
    }
    waited = true;
    await sleep(attempt.retryInMs, options.signal);
  }
}

export interface RateLimitWait {
  brain: BrainTurnRequest;
  waitedMs: number;
}

/**
 * The gate runners hand to brains: turns come from the database, and each wait is reported
 * to `onWait` (the executor records it as an event) before the call goes out.
 */
export function databaseCallGate(
  db: Db,
  options: { onWait?: (wait: RateLimitWait) => Promise<void> | void; holdMs?: number } = {},
): BrainCallGate {
  return {
    async waitTurn(brain, signal) {
      const turn = await waitForTurn(
        db,
        { brainId: brain.brainId, baseUrl: brain.baseUrl },
        { minIntervalMs: brain.minIntervalMs, signal, holdMs: options.holdMs },
      );
      if (turn.waitedMs > 0) recordRateLimitWait(brain.brainId, turn.waitedMs / 1000);
      if (turn.waitedMs > 0 && options.onWait) {
        try {
          await options.onWait({ brain, waitedMs: turn.waitedMs });
        } catch (err) {
          await turn.release();
          throw err;
        }
      }
      return turn;
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
