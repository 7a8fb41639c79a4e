// What every measurement receives, and what it contributes to the report.
import type pg from "pg";
import type { EventStore } from "../../server/events/store";
import type { BenchReportFigures } from "./report";

export interface BenchContext {
  /** Connection string of the fresh, migrated bench database. */
  url: string;
  /** Shared pool (max 10) behind `store`; measurements may add their own. */
  pool: pg.Pool;
  /** The application's store: app registry + every inline projection. */
  store: EventStore;
  log: (line: string) => void;
  /** Side facts worth keeping (e.g. counts that explain a figure); merged into meta. */
  note: (key: string, value: unknown) => void;
}

export interface Measurement {
  name: string;
  /** Report keys this measurement fills; set to null when it fails. */
  keys: (keyof BenchReportFigures)[];
  run(ctx: BenchContext): Promise<Partial<BenchReportFigures>>;
}
