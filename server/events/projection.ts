// Inline projections: read models updated in the same transaction as the events they
// derive from, and rebuildable from the log with the very same handler code.
import type { Tx } from "../db/pool";
import type { RecordedEvent } from "./types";

export interface Projection {
  name: string;
  /** Event types it reacts to: appends of other events skip it (and may skip a transaction). */
  handles: readonly string[];
  /** Tables this projection owns; truncated before a rebuild. */
  tables: string[];
  /** Columns that are operational state rather than derived data (excluded from rebuild equality). */
  operationalColumns?: Record<string, string[]>;
  apply(tx: Tx, events: RecordedEvent[], mode: "live" | "rebuild"): Promise<void>;
}
