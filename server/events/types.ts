// Shapes shared by the event store, projections and readers.
import type { Actor } from "./catalog";

export interface EventMetadata {
  actor: Actor;
  correlationId: string;
  causationId: string | null;
  schemaVersion: number;
  /**
   * The W3C trace context the append ran in, when tracing is on: a runner continues the
   * trace of the command that scheduled its step (docs/operations.md, "Traces").
   */
  traceparent?: string;
}

/**
 * Metadata as an `events` row stores it: what is empty or the default is left out (no
 * `causationId` when there is none, no `schemaVersion` when it is 1, no `correlationId` when
 * the event correlates with nothing but itself), since every byte of every event is written
 * again to the WAL (docs/scaling.md, "What a step costs: the model"). Read back through
 * {@link recordedMetadata}.
 */
export type StoredEventMetadata = Omit<EventMetadata, "correlationId" | "causationId" | "schemaVersion"> & {
  correlationId?: string;
  causationId?: string | null;
  schemaVersion?: number;
};

/** The schema version rows leave out. */
export const DEFAULT_SCHEMA_VERSION = 1;

/** `correlationId` undefined: the event is alone in its append and nobody gave one (read back as the event's id). */
export function storedMetadata(m: Omit<EventMetadata, "correlationId"> & { correlationId: string | undefined }): StoredEventMetadata {
  const { correlationId, causationId, schemaVersion, ...rest } = m;
  return {
    ...rest,
    ...(correlationId ? { correlationId } : {}),
    ...(causationId ? { causationId } : {}),
    ...(schemaVersion !== DEFAULT_SCHEMA_VERSION ? { schemaVersion } : {}),
  };
}

/**
 * A row's metadata with what it left out filled in (older rows store every field): an event
 * that correlates with nothing else has its own id as its correlation id.
 */
export function recordedMetadata(m: StoredEventMetadata, eventId: string): EventMetadata {
  return {
    ...m,
    correlationId: m.correlationId ?? eventId,
    causationId: m.causationId ?? null,
    schemaVersion: m.schemaVersion ?? DEFAULT_SCHEMA_VERSION,
  };
}

/** What a caller supplies when appending: type + data, optionally a fixed id for idempotency. */
export interface NewEvent {
  type: string;
  data: unknown;
  eventId?: string;
}

export interface AppendMetadata {
  actor: Actor;
  correlationId?: string;
  causationId?: string | null;
}

export interface RecordedEvent<T extends string = string, D = unknown> {
  position: number;
  txId: number;
  eventId: string;
  streamId: string;
  version: number;
  type: T;
  data: D;
  metadata: EventMetadata;
  recordedAt: string;
}

/**
 * What a replay fold reads of an event, and all that the lean read (fold-read.ts) fetches:
 * its stream version, type, data (validated when appended; upcast when older) and time.
 */
export type FoldEvent = Pick<RecordedEvent, "version" | "type" | "data" | "recordedAt">;

/** 0 / "no_stream": the stream must not exist yet; n: its version must be n; "any": no check. */
export type ExpectedVersion = number | "no_stream" | "any";

export interface AppendResult {
  streamId: string;
  /** Stream version after the append. */
  version: number;
  events: RecordedEvent[];
  /** True when every event id was already recorded: a retried append, nothing new written. */
  duplicate: boolean;
}

/** Position in the global order for `readAll`: (transaction id, position). */
export interface GlobalCheckpoint {
  txId: number;
  position: number;
}

export const START_CHECKPOINT: GlobalCheckpoint = { txId: 0, position: 0 };
