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
  /**
   * Applied live by the database itself (a trigger on `events` calling the same function
   * `apply` calls in a rebuild), inside the append statement: the store then never calls
   * `apply` live, and `refusal` turns the trigger's error into the projection's own.
   */
  inDatabase?: { refusal(err: unknown): Error | null };
  apply(tx: Tx, events: RecordedEvent[], mode: "live" | "rebuild"): Promise<void>;
}
