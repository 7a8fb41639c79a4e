// Content-addressed storage for large payloads (raw agent output, logs, diffs). Events
// carry a BlobRef; list and timeline queries never load the content.
import crypto from "node:crypto";
import { z } from "zod";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";

export const ZBlobRef = z.object({
  blob: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  mediaType: z.string(),
});
export type BlobRef = z.infer<typeof ZBlobRef>;

/** Stores `content` once (same bytes, same hash) and returns its reference. */
export async function putBlob(db: Queryable, content: string | Buffer, mediaType = "text/plain; charset=utf-8"): Promise<BlobRef> {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  const hash = crypto.createHash("sha256").update(bytes).digest("hex");
  await db.query(`INSERT INTO blobs (hash, size, media_type, content) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING`, [
    hash,
    bytes.length,
    mediaType,
    bytes,
  ]);
  return { blob: hash, size: bytes.length, mediaType };
}

export async function getBlob(db: Queryable, hash: string): Promise<{ content: Buffer; mediaType: string }> {
  const r = await db.query<{ content: Buffer; media_type: string }>("SELECT content, media_type FROM blobs WHERE hash = $1", [hash]);
  const row = r.rows[0];
  if (!row) throw new AppError("NOT_FOUND", `blob ${hash} not found`);
  return { content: row.content, mediaType: row.media_type };
}
