// What a backup directory holds and how its manifest.json reads (docs/operations.md,
// "Backup and restore"): one COPY file per table, and the manifest that says what a restore
// must find in them (row counts, sha256 of each file, the events' hashes per stream).
import { z } from "zod";

export const BACKUP_FORMAT = "catcafe-backup/1";
export const MANIFEST_FILE = "manifest.json";

const ZSha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const ZBackupTable = z.object({
  name: z.string().regex(/^[a-z_][a-z0-9_]*$/),
  /** The columns in the order of the file's fields. */
  columns: z.array(z.string().min(1)).min(1),
  rows: z.number().int().nonnegative(),
  /** Relative to the backup directory: PostgreSQL's COPY text format, gzip-compressed. */
  file: z.string().regex(/^tables\/[a-z0-9_]+\.copy\.gz$/),
  bytes: z.number().int().nonnegative(),
  sha256: ZSha256,
});
export type BackupTable = z.infer<typeof ZBackupTable>;

export const ZStreamHash = z.object({ id: z.string(), events: z.number().int().positive(), sha256: ZSha256 });
export type StreamHash = z.infer<typeof ZStreamHash>;

export const ZBackupManifest = z.object({
  format: z.literal(BACKUP_FORMAT),
  appVersion: z.string(),
  createdAt: z.iso.datetime(),
  postgresVersion: z.string(),
  /** The migrations the database had, in order (name and the sha256 of its SQL, as _prisma_migrations records). */
  migrations: z.array(z.object({ name: z.string(), checksum: ZSha256 })).min(1),
  tables: z.array(ZBackupTable).min(1),
  events: z.object({ count: z.number().int().nonnegative(), streams: z.array(ZStreamHash) }),
  durationMs: z.number().int().nonnegative(),
});
export type BackupManifest = z.infer<typeof ZBackupManifest>;
