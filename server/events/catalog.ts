// Every event type Cat Cafe records, declared once. Domains add their types here so
// that one registry validates every append and every read.
import { z } from "zod";
import { defineEvent, EventRegistry, type EventUnionOf } from "./registry";

export const ZActor = z.object({
  kind: z.enum(["user", "agent", "runner", "system"]),
  id: z.string().min(1),
});
export type Actor = z.infer<typeof ZActor>;

/** How an actor is shown and stored in read models: `user:42`, `runner:r-1`, `system`. */
export function actorLabel({ kind, id }: Actor): string {
  return kind === "system" ? "system" : `${kind}:${id}`;
}

/** The error taxonomy (SPEC W10): every failure is exactly one of these. */
export const ERROR_CLASSES = [
  "provider_network_error",
  "provider_rate_limit",
  "provider_auth_error",
  "timeout",
  "cancelled",
  "schema_invalid",
  "command_refused",
  "command_failed",
  "tool_error",
  "internal_error",
] as const;
export const ZErrorClass = z.enum(ERROR_CLASSES);
export type ErrorClass = z.infer<typeof ZErrorClass>;

const ZJson = z.json();

export const eventCatalog = {
  SessionCreated: defineEvent({
    version: 1,
    schema: z.object({
      title: z.string().min(1).max(500),
      workflow: z.string().min(1),
      state: z.string().min(1),
    }),
    summary: (d) => `Session "${d.title}" created (${d.workflow})`,
  }),
  SessionForked: defineEvent({
    version: 1,
    schema: z.object({
      parentId: z.string().min(1),
      atVersion: z.number().int().nonnegative(),
      reason: z.enum(["rerun", "modify", "revert", "manual"]),
      title: z.string().min(1).max(500),
      workflow: z.string().min(1),
      state: z.string().min(1),
    }),
    summary: (d) => `Forked from ${d.parentId} at event ${d.atVersion} (${d.reason})`,
  }),
  SessionStateChanged: defineEvent({
    version: 1,
    schema: z.object({ from: z.string(), to: z.string(), reason: z.string().optional() }),
    summary: (d) => `State ${d.from} → ${d.to}${d.reason ? ` (${d.reason})` : ""}`,
  }),
  OperatorMessagePosted: defineEvent({
    version: 1,
    schema: z.object({ text: z.string().min(1).max(20_000) }),
    summary: (d) => `Message: ${d.text}`,
  }),
  StepScheduled: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      kind: z.string().min(1),
      input: ZJson,
      timeoutMs: z.number().int().positive(),
      maxAttempts: z.number().int().positive(),
      availableAt: z.iso.datetime({ offset: true }).optional(),
    }),
    summary: (d) => `Step ${d.kind} scheduled`,
  }),
  StepStarted: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      attempt: z.number().int().positive(),
      runnerId: z.string().min(1),
      leaseExpiresAt: z.iso.datetime({ offset: true }),
    }),
    summary: (d) => `Step started (attempt ${d.attempt}) on runner ${d.runnerId}`,
  }),
  StepCompleted: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), attempt: z.number().int().positive(), output: ZJson }),
    summary: (d) => `Step completed (attempt ${d.attempt})`,
  }),
  StepFailed: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      attempt: z.number().int().positive(),
      errorClass: ZErrorClass,
      message: z.string(),
      /** When set, the step goes back to pending and may be claimed again from then on. */
      retryAt: z.iso.datetime({ offset: true }).nullable(),
    }),
    summary: (d) => `Step failed (attempt ${d.attempt}): ${d.errorClass}: ${d.message}${d.retryAt ? " — will retry" : ""}`,
  }),
  StepReleased: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), attempt: z.number().int().positive(), reason: z.string() }),
    summary: (d) => `Step released by its runner (attempt ${d.attempt}): ${d.reason}`,
  }),
} as const;

export type AppEventCatalog = typeof eventCatalog;
export type AppEvent = EventUnionOf<AppEventCatalog>;
export type AppEventType = AppEvent["type"];

export const appRegistry = new EventRegistry(eventCatalog);
