// Shapes shared by the export's parts: the file map it produces and how it reads blobs.
import type { AppEvent } from "../events/catalog";
import type { SessionEvent } from "../sessions/rounds";

export type { SessionEvent };

/** Export path (relative, '/'-separated) → content. Insertion order is the listing order. */
export type ExportFiles = Map<string, Buffer | string>;

/** Loads a blob's bytes by its hash (the event store's blobs table, or anything else). */
export type BlobLoader = (hash: string) => Promise<Buffer>;

export type SessionEventOf<T extends AppEvent["type"]> = Extract<SessionEvent, { type: T }>;

/** `{...}` pretty JSON with a final newline: the export's `.json` files. */
export function jsonFile(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** One compact JSON document per line, each line ending in a newline. */
export function jsonLines(values: unknown[]): string {
  return values.map((v) => `${JSON.stringify(v)}\n`).join("");
}
