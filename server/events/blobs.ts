// Content-addressed storage for large payloads (raw agent output, logs, diffs). Events
// carry a BlobRef; list and timeline queries never load the content.
import { redactKnownSecrets } from "../redact";
import crypto from "node:crypto";
import { z } from "zod";
import { withTransaction, type Queryable } from "../db/pool";
import type pg from "pg";
import { AppError } from "../errors";

export const ZBlobRef = z.object({
  blob: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  mediaType: z.string(),
});
export type BlobRef = z.infer<typeof ZBlobRef>;

/** Stores `content` once (same bytes, same hash) and returns its reference. */
export async function putBlob(db: Queryable, content: string | Buffer, mediaType = "text/plain; charset=utf-8"): Promise<BlobRef> {
  // Text is stored as it may be recorded: no value the server knows to be a secret (process/env.ts).
  const bytes = typeof content === "string" ? Buffer.from(redactKnownSecrets(content).text, "utf8") : content;
  const hash = crypto.createHash("sha256").update(bytes).digest("hex");
  // Storing existing content again refreshes its age: the collector's grace period counts from here.
  await db.query(
    `INSERT INTO blobs (hash, size, media_type, content) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO UPDATE SET created_at = now()`,
    [hash, bytes.length, mediaType, bytes],
  );
  return { blob: hash, size: bytes.length, mediaType };
}

export async function getBlob(db: Queryable, hash: string): Promise<{ content: Buffer; mediaType: string }> {
  const r = await db.query<{ content: Buffer; media_type: string }>("SELECT content, media_type FROM blobs WHERE hash = $1", [hash]);
  const row = r.rows[0];
  if (!row) throw new AppError("NOT_FOUND", `blob ${hash} not found`);
  return { content: row.content, mediaType: row.media_type };
}

/** How old an unreferenced blob must be before it is collected: longer than any step runs. */
export const BLOB_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes blobs that no event references (the raw output, diff or bundle of an attempt
 * whose result was rejected or never recorded) once they are older than `graceMs`. One
 * pass over the events collects every `…blob` reference; up to `limit` blobs go per call.
 * Only one caller at a time does the work (an advisory lock); the others return 0.
 */
export async function collectUnreferencedBlobs(pool: pg.Pool, options: { graceMs?: number; limit?: number } = {}): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const locked = await tx.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock(hashtextextended('catcafe-blob-collector', 0)) AS ok");
    if (!locked.rows[0]?.ok) return 0;
    const r = await tx.query(
      `WITH candidates AS (
         SELECT hash FROM blobs WHERE created_at < now() - $1 * interval '1 millisecond' ORDER BY created_at LIMIT $2
       ), referenced AS (
         SELECT DISTINCT ref #>> '{}' AS hash
         FROM events, jsonb_path_query(data, 'lax $.**.blob ? (@.type() == "string")') AS ref
       )
       DELETE FROM blobs WHERE hash IN (SELECT hash FROM candidates EXCEPT SELECT hash FROM referenced)`,
      [options.graceMs ?? BLOB_GRACE_MS, options.limit ?? 1000],
    );
    return r.rowCount ?? 0;
  });
}
