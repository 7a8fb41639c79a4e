// Typed event registry: each event type is declared once with a zod schema and a
// schema version. Appending or reading data that does not validate is an error; events
// written under an older version are upcast step by step when read (the log is forever).
import { z } from "zod";
import { AppError } from "../errors";

export interface EventDefinition<S extends z.ZodType = z.ZodType> {
  /** Current schema version of this event type; stored in each event's metadata. */
  version: number;
  schema: S;
  /** upcasters[n] turns data written at version n into data of version n + 1. */
  upcasters?: Record<number, (data: unknown) => unknown>;
  /** One line for timelines (no payloads). */
  summary?: (data: z.infer<S>) => string;
}

export type EventCatalog = Record<string, EventDefinition>;

export function defineEvent<S extends z.ZodType>(def: EventDefinition<S>): EventDefinition<S> {
  return def;
}

export type EventTypeOf<C extends EventCatalog> = Extract<keyof C, string>;
export type EventDataOf<C extends EventCatalog, T extends EventTypeOf<C>> = z.infer<C[T]["schema"]>;
/** Discriminated union of `{type, data}` over a catalog. */
export type EventUnionOf<C extends EventCatalog> = {
  [T in EventTypeOf<C>]: { type: T; data: EventDataOf<C, T> };
}[EventTypeOf<C>];

function formatIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`).join("; ");
}

export class EventRegistry<C extends EventCatalog = EventCatalog> {
  constructor(readonly catalog: C) {}

  definition(type: string): EventDefinition {
    const def = this.catalog[type];
    if (!def) throw new AppError("INVALID_INPUT", `unknown event type "${type}"`);
    return def;
  }

  /** Validates data about to be appended; returns the parsed data and its schema version. */
  encode(type: string, data: unknown): { data: unknown; schemaVersion: number } {
    const def = this.definition(type);
    const parsed = def.schema.safeParse(data);
    if (!parsed.success) {
      throw new AppError("INVALID_INPUT", `invalid ${type} event: ${formatIssues(parsed.error)}`);
    }
    return { data: parsed.data, schemaVersion: def.version };
  }

  /** Upcasts stored data to the current version and validates it. */
  decode(type: string, data: unknown, storedVersion: number): unknown {
    const def = this.definition(type);
    let current = data;
    for (let v = storedVersion; v < def.version; v++) {
      const up = def.upcasters?.[v];
      if (!up) throw new AppError("INTERNAL", `no upcaster for ${type} from version ${v} to ${v + 1}`);
      current = up(current);
    }
    const parsed = def.schema.safeParse(current);
    if (!parsed.success) {
      throw new AppError("INTERNAL", `stored ${type} event does not match its schema: ${formatIssues(parsed.error)}`);
    }
    return parsed.data;
  }

  summarize(type: string, data: unknown): string {
    const def = this.catalog[type];
    const line = def?.summary ? def.summary(data) : type;
    return line.length > 200 ? `${line.slice(0, 197)}...` : line;
  }
}
