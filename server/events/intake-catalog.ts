// The events of intake from an issue tracker (docs/intake.md). A task started from an issue
// records `TaskStartedFromIssue` in its session's stream, in the transaction that starts it (the
// outbound side reads it by SQL to link the pull request and comment on the issue). What
// concerns the project's intake rather than one session — its webhook secret set or rotated
// (never the value), a delivery held in the inbox and how that ended — is in the stream
// `intake-<projectId>`.
import { z } from "zod";
import { ZBakeOffStart } from "./bake-off-catalog";
import { defineEvent } from "./registry";

export const intakeStream = (projectId: string) => `intake-${projectId}`;

export const INTAKE_PROVIDERS = ["github", "gitlab"] as const;
export const INTAKE_TRIGGERS = ["label", "assignment", "comment"] as const;
/** Why a delivery that matched a rule was held rather than started. */
export const INTAKE_HOLD_REASONS = ["no_permission", "permission_unknown", "not_ready", "rate_limited"] as const;

const ZProvider = z.enum(INTAKE_PROVIDERS);
const ZTrigger = z.enum(INTAKE_TRIGGERS);
const issueRef = {
  provider: ZProvider,
  repository: z.string().min(1).max(300),
  issueNumber: z.number().int().nonnegative(),
  issueUrl: z.string().max(2000),
  title: z.string().max(500),
  trigger: ZTrigger,
  deliveryId: z.string().min(1).max(200),
  sender: z.string().max(200),
};

export const intakeCatalog = {
  /** In the session's stream, right after its start, in the same transaction. */
  TaskStartedFromIssue: defineEvent({
    version: 1,
    schema: z.object(issueRef),
    summary: (d) => `Started from ${d.provider} issue ${d.repository}#${d.issueNumber} (${d.trigger} by ${d.sender})`,
  }),
  /**
   * In the session's stream with TaskStartedFromIssue, when the project's rule confirms the
   * trigger's tasks itself: the first wait for a confirm is confirmed by `system:intake`.
   */
  IntakeAutoConfirm: defineEvent({
    version: 1,
    schema: z.object({ trigger: ZTrigger }),
    summary: (d) => `Confirmed automatically when the proposal is ready (the ${d.trigger} rule's autoConfirm)`,
  }),
  /** The project's webhook secret was set (`rotated`: it replaced one); the value is never recorded. */
  IntakeSecretSet: defineEvent({
    version: 1,
    schema: z.object({ projectId: z.string().min(1), rotated: z.boolean() }),
    summary: (d) => `Webhook secret of project ${d.projectId} ${d.rotated ? "rotated" : "set"}`,
  }),
  /** A delivery matched a rule but was not started: it waits in the inbox with its reason. */
  IntakeHeld: defineEvent({
    version: 1,
    schema: z.object({
      ...issueRef,
      projectId: z.string().min(1),
      reason: z.enum(INTAKE_HOLD_REASONS),
      detail: z.string().max(1000),
      /** The prompt the task would start with (redacted and cut as docs/intake.md says). */
      prompt: z.string().max(20_000),
      workflow: z.string().min(1),
      autoConfirm: z.boolean(),
      /** A bake_off rule's contenders (docs/bake-off.md): the task starts as that bake-off. */
      bakeOff: ZBakeOffStart.optional(),
    }),
    summary: (d) => `Issue ${d.repository}#${d.issueNumber} held (${d.reason}): ${d.detail}`,
  }),
  /** A person started a held delivery from the inbox, or dismissed it. */
  IntakeResolved: defineEvent({
    version: 1,
    schema: z.object({
      deliveryId: z.string().min(1).max(200),
      provider: ZProvider,
      resolution: z.enum(["started", "dismissed"]),
      sessionId: z.string().optional(),
    }),
    summary: (d) => `Held issue delivery ${d.deliveryId} ${d.resolution}${d.sessionId ? ` as ${d.sessionId}` : ""}`,
  }),
};
