// The events of a step's life in the runner's queue (docs/architecture.md, "Steps"): scheduled
// (by the workflow engine, a conversation or a delivery), started on a runner under a lease,
// then completed, failed (perhaps to be retried), released or cancelled; and while an
// attempt runs, its progress: a brain's rate-limit wait (req R5), a provider's own retry,
// the agent's output as it arrives. In the stream of the session that scheduled the step.
import { z } from "zod";
import { ZAgentRole } from "../agent-calls";
import { ZErrorClass } from "../errors";
import { defineEvent } from "./registry";
import { ZAgentStepOutput, ZStepResult, ZStepScheduled } from "./step-contract";

/** What a completion's summary reads of its output; built once (a zod `pick` builds a new schema per call). */
const ZEgressRefusedOutput = ZAgentStepOutput.pick({ egressRefused: true });

export const stepCatalog = {
  StepScheduled: defineEvent({
    version: 1,
    /** A workflow step's input is a StepInput; other kinds carry free JSON (step-contract.ts). */
    schema: ZStepScheduled,
    summary: (d) => `Step ${d.kind} scheduled`,
  }),
  StepStarted: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      attempt: z.number().int().positive(),
      runnerId: z.string().min(1),
      leaseExpiresAt: z.iso.datetime({ offset: true }),
      /**
       * Taken over from a runner whose lease expired (a lost attempt, not charged to the step).
       * The claim records it only when true (docs/scaling.md, "What a step costs: the model").
       */
      reclaimed: z.boolean().optional(),
    }),
    summary: (d) => `Step started (attempt ${d.attempt}) on runner ${d.runnerId}`,
  }),
  StepCompleted: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), attempt: z.number().int().positive(), output: ZStepResult }),
    summary: (d) => {
      const parsed = ZEgressRefusedOutput.safeParse(d.output);
      const refused = parsed.success ? (parsed.data.egressRefused ?? []) : [];
      return `Step completed (attempt ${d.attempt})${refused.length ? `; the egress proxy refused ${refused.join(", ")}` : ""}`;
    },
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
      /** No live runner can run the step: it fails as this attempt without having started (docs/scaling.md). */
      unrunnable: z.boolean().optional(),
    }),
    summary: (d) => `Step failed (attempt ${d.attempt}): ${d.errorClass}: ${d.message}${d.retryAt ? " — will retry" : ""}`,
  }),
  StepReleased: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      attempt: z.number().int().positive(),
      reason: z.string(),
      /**
       * The runner found at run time that it cannot run the step (its clone lacks a commit, or
       * is gone): which runner, on which host, what it lacks. It never claims the step again.
       */
      unable: z.object({ runnerId: z.string().min(1), host: z.string().min(1), missing: z.string().min(1) }).optional(),
    }),
    summary: (d) => `Step released by its runner (attempt ${d.attempt}): ${d.reason}`,
  }),
  StepCancelled: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid() }),
    summary: () => "Running step cancelled",
  }),
  /** A brain's shared rate limit (req R5) held the attempt back before its call. */
  RateLimitWaited: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      attempt: z.number().int().positive(),
      /** The brain's agent id. */
      brain: z.string().min(1),
      minIntervalMs: z.number().int().nonnegative(),
      waitMs: z.number().int().nonnegative(),
    }),
    summary: (d) => `Waited ${d.waitMs} ms for brain ${d.brain} (rate limit: one call per ${d.minIntervalMs} ms)`,
  }),
  /** An agent CLI retried its provider request itself (within providerRetries). */
  ProviderRetried: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      attempt: z.number().int().positive(),
      agent: z.string().min(1),
      retry: z.number().int().positive(),
      maxRetries: z.number().int().nonnegative().nullable(),
      /** How long the CLI waits first (the provider's Retry-After), when it says. */
      delayMs: z.number().int().nonnegative().nullable(),
      error: z.string(),
    }),
    summary: (d) =>
      `${d.agent} retried its provider request (${d.retry}${d.maxRetries !== null ? ` of ${d.maxRetries}` : ""}) after: ${d.error}${d.delayMs !== null ? `, waiting ${d.delayMs} ms` : ""}`,
  }),
  /** Agent output while it arrives (coalesced chunks), for live views; the whole text is in AgentOutputRecorded. */
  AgentOutputStreamed: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      attempt: z.number().int().positive(),
      role: ZAgentRole,
      seq: z.number().int().nonnegative(),
      text: z.string().max(65_536),
    }),
    summary: (d) => `${d.role} is writing: ${d.text.replace(/\s+/g, " ").slice(-120)}`,
  }),
} as const;
