// Narrowed entry types for the cards: an entry whose `detail` is of one kind.
import type { EntryDetail, SessionEntry } from "@/server/sessions/view/entries";

export type EntryOf<K extends EntryDetail["kind"]> = SessionEntry & { detail: Extract<EntryDetail, { kind: K }> };

export function isKind<K extends EntryDetail["kind"]>(entry: SessionEntry, kind: K): entry is EntryOf<K> {
  return entry.detail.kind === kind;
}
