// Repeating a command (docs/api.md, "Repeating a command"): a client sends one
// `Idempotency-Key` per intent (a click, a CLI invocation, an MCP call) with a request that
// changes something, and the key makes the request safe to send again. The first request with
// a key takes it (a row of `command_keys`, per user) and is carried out as the command of that
// key (server/events/command-keys.ts: whatever it records is noted on the row in the same
// transaction). Its answer (status, content type, body) is kept; the same key with the same
// request gets that answer again, whether it comes after the first finished or while it is
// still being carried out (then it waits for it, up to IN_FLIGHT_WAIT_MS, else a 409 to try
// again after); the same key with another request is a 422 naming the key. Keys are kept
// KEY_LIFETIME_HOURS. The answer is kept, and a failed request's key let go, in the background:
// a busy database never turns an answer the client is owed into a 503.
//
// What is not kept: an answer that said the server could not do it (5xx), which did nothing
// (nothing was noted on the key), so the key is let go and a retry carries the command out;
// and the secrets an answer shows once (an API token, an invitation's link): the kept answer
// has them replaced (SHOWN_ONCE), so they are never stored in clear, and a repeat learns that
// the command was carried out without getting the secret a second time.
import crypto from "node:crypto";
import type { Db } from "../db/pool";
import { AppError, RETRY_AFTER_SECONDS } from "../errors";
import { withCommandKey, type KeyEffect } from "../events/command-keys";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** A key is answered again for this long, then forgotten. */
export const KEY_LIFETIME_HOURS = 24;
/** How long a repeat waits for the first request with its key to finish before a 409. */
export const IN_FLIGHT_WAIT_MS = 10_000;
/** A holder that has not answered after this long, with nothing recorded, is taken to be gone (a crashed web process). */
export const ABANDONED_AFTER_MS = 60_000;
/** Printable ASCII, as a header holds it: a UUID is the usual key. */
const KEY_FORMAT = /^[\x21-\x7e]{1,200}$/;
/** The header the answer to a repeat carries. */
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** API tokens (`cc_`) and invitation tokens (`ci_`): 32 random bytes, base64url. */
const SECRET_TOKENS = /\b(?:cc|ci)_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;
/** What a kept answer holds instead of a secret it showed once. */
export const SHOWN_ONCE = "(shown once, not kept)";

/** An answer as it is kept: every token it shows once replaced. */
export function keptBody(body: Buffer): Buffer {
  const text = body.toString("utf8");
  const kept = text.replace(SECRET_TOKENS, SHOWN_ONCE);
  return kept === text ? body : Buffer.from(kept, "utf8");
}

interface KeyRow {
  command: string;
  request_hash: string;
  effects: KeyEffect[];
  status: number | null;
  content_type: string | null;
  body: Buffer | null;
  held_ms: number;
}

/**
 * Carries out the request `req` of `userId` through `run`, once per idempotency key: without
 * the header, `run` as it is; with it, as the module's comment says.
 */
export async function idempotent(pool: Db, req: Request, userId: string, run: (req: Request) => Promise<Response>): Promise<Response> {
  const key = req.headers.get(IDEMPOTENCY_HEADER);
  if (key === null || req.method === "GET" || req.method === "HEAD") return run(req);
  if (!KEY_FORMAT.test(key))
    throw new AppError("INVALID_INPUT", `the ${IDEMPOTENCY_HEADER} header must be 1 to 200 printable ASCII characters (a UUID)`);
  const body = Buffer.from(await req.clone().arrayBuffer());
  const command = `${req.method} ${new URL(req.url).pathname}`;
  const requestHash = crypto.createHash("sha256").update(command).update("\n").update(body).digest("hex");

  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
    if (await claim(pool, userId, key, command, requestHash)) return carryOut(pool, userId, key, req, run);
    const row = await readKey(pool, userId, key);
    if (!row) continue; // let go or forgotten meanwhile: claim it again
    if (row.command !== command || row.request_hash !== requestHash) {
      throw new AppError(
        "UNPROCESSABLE",
        `the ${IDEMPOTENCY_HEADER} ${key} was used for another request (${row.command}); use a new key for a new request`,
        { idempotencyKey: key },
      );
    }
    if (row.status !== null) return replay(row);
    if (row.held_ms > ABANDONED_AFTER_MS && row.effects.length === 0 && (await takeOver(pool, userId, key))) {
      return carryOut(pool, userId, key, req, run);
    }
    if (row.held_ms > ABANDONED_AFTER_MS) {
      // Recorded, and its answer lost with the process that held it: what it did is known.
      throw new AppError(
        "CONFLICT",
        `the request with ${IDEMPOTENCY_HEADER} ${key} was carried out, but its answer was lost; what it recorded is in current.effects`,
        { current: { version: row.effects.at(-1)?.version ?? 0, effects: row.effects } },
      );
    }
    if (Date.now() + wait > deadline) {
      throw new AppError("CONFLICT", `a request with ${IDEMPOTENCY_HEADER} ${key} is still being carried out; try again shortly`, {
        retryAfter: RETRY_AFTER_SECONDS,
      });
    }
    await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * Takes the key for this request, in one statement (a busy pool is met once): a new key, or
 * one past its lifetime, which is forgotten and taken afresh. False when someone holds it (or
 * held it: a kept answer).
 */
async function claim(pool: Db, userId: string, key: string, command: string, requestHash: string): Promise<boolean> {
  const taken = await pool.query(
    `INSERT INTO command_keys (user_id, key, command, request_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id, key) DO UPDATE SET command = EXCLUDED.command, request_hash = EXCLUDED.request_hash,
       effects = '[]'::jsonb, status = NULL, content_type = NULL, body = NULL, answered_at = NULL,
       claimed_at = now(), created_at = now()
     WHERE command_keys.created_at < now() - make_interval(hours => $5)`,
    [userId, key, command, requestHash, KEY_LIFETIME_HOURS],
  );
  if (taken.rowCount === 1) sweepSometimes(pool);
  return taken.rowCount === 1;
}

/** The keys of everyone past their lifetime, forgotten a batch at a time: at most once a minute per process. */
let lastSweep = 0;
function sweepSometimes(pool: Db): void {
  if (Date.now() - lastSweep < 60_000) return;
  lastSweep = Date.now();
  pool
    .query(
      `DELETE FROM command_keys WHERE (user_id, key) IN (
         SELECT user_id, key FROM command_keys WHERE created_at < now() - make_interval(hours => $1) LIMIT 1000)`,
      [KEY_LIFETIME_HOURS],
    )
    .catch(() => {
      // Busy or away: the next sweep takes them.
    });
}

async function readKey(pool: Db, userId: string, key: string): Promise<KeyRow | null> {
  const r = await pool.query<KeyRow>(
    `SELECT command, request_hash, effects, status, content_type, body,
            (extract(epoch FROM now() - claimed_at) * 1000)::int AS held_ms
     FROM command_keys WHERE user_id = $1 AND key = $2`,
    [userId, key],
  );
  return r.rows[0] ?? null;
}

/** A holder gone with nothing recorded: the key is this request's now (one of several racing wins). */
async function takeOver(pool: Db, userId: string, key: string): Promise<boolean> {
  const r = await pool.query(
    `UPDATE command_keys SET claimed_at = now()
     WHERE user_id = $1 AND key = $2 AND status IS NULL AND effects = '[]'::jsonb AND claimed_at < now() - make_interval(secs => $3)`,
    [userId, key, ABANDONED_AFTER_MS / 1000],
  );
  return r.rowCount === 1;
}

async function carryOut(pool: Db, userId: string, key: string, req: Request, run: (req: Request) => Promise<Response>): Promise<Response> {
  let response: Response;
  try {
    response = await withCommandKey({ userId, key }, () => run(req));
  } catch (err) {
    letGo(pool, userId, key);
    throw err;
  }
  if (response.status >= 500) {
    letGo(pool, userId, key);
    return response;
  }
  const body = Buffer.from(await response.arrayBuffer());
  keep(pool, userId, key, response.status, response.headers.get("content-type"), keptBody(body));
  return new Response(body, { status: response.status, headers: response.headers });
}

/** Tries to keep an answer, or let a key go, in the background while the database is busy or away: the tries' waits in ms. */
export const BACKGROUND_WAITS_MS = [0, 250, 500, 1_000, 2_000, 4_000, 8_000];

/** Runs `query` until it succeeds, waiting BACKGROUND_WAITS_MS between tries; after the last, gives up quietly. */
function inBackground(query: () => Promise<unknown>): void {
  void (async () => {
    for (const wait of BACKGROUND_WAITS_MS) {
      await new Promise((r) => setTimeout(r, wait));
      try {
        await query();
        return;
      } catch {
        // Busy or away: try again after the next wait.
      }
    }
  })();
}

/**
 * Keeps the answer of a request carried out, for repeats of its key. The request is answered
 * at once: the database that just carried it out may be too busy to keep its answer right
 * away, and the client, which has it, must not be told otherwise. A repeat meanwhile waits for
 * it; one that never comes (the process gone, every try failed) leaves a key that says what
 * its command recorded.
 */
function keep(pool: Db, userId: string, key: string, status: number, contentType: string | null, body: Buffer): void {
  inBackground(() =>
    pool.query(`UPDATE command_keys SET status = $3, content_type = $4, body = $5, answered_at = now() WHERE user_id = $1 AND key = $2`, [
      userId,
      key,
      status,
      contentType,
      body,
    ]),
  );
}

/**
 * A request that failed on the server's side lets its key go, unless it recorded something
 * (then the key keeps that), so that the client's retry with the key carries the command out.
 * Often it failed because the database was busy or away, and then so may the release: it is
 * tried again in the background rather than left for the key to be taken over only once
 * abandoned; the client's retry meanwhile waits for it like for any holder.
 */
function letGo(pool: Db, userId: string, key: string): void {
  inBackground(() =>
    pool.query("DELETE FROM command_keys WHERE user_id = $1 AND key = $2 AND status IS NULL AND effects = '[]'::jsonb", [userId, key]),
  );
}

function replay(row: KeyRow): Response {
  const headers: Record<string, string> = { "Cache-Control": "no-store", [REPLAYED_HEADER]: "true" };
  if (row.content_type) headers["Content-Type"] = row.content_type;
  return new Response(row.body ? new Uint8Array(row.body) : null, { status: row.status ?? 200, headers });
}
