// Every event type Cat Cafe records, declared once. Sessions, tasks and the workflow
// engine's facts are here; the steps' life (step-catalog.ts), the configuration
// (config-catalog.ts), Forge (forge-catalog.ts), conversations, deliveries and the team's
// administration (team-catalog.ts) have catalogs of their own, composed below, so that one
// registry validates every append and every read.
import { z } from "zod";
import { ZAgentRole, ZAgentUsage } from "../agent-calls";
import { ZErrorClass } from "../errors";
import { ZParsedOutput, ZTaskSpec } from "./agent-outputs";
import { ZBlobRef } from "./blobs";
import {
  ZAgentSnapshots,
  ZMcpServerSnapshots,
  ZRunLimits,
  ZCommandResult,
  ZStepPhase,
  ZTestCommandRecord,
  ZWorkspaceCommit,
} from "./step-contract";
import { configCatalog } from "./config-catalog";
import { conversationCatalog } from "./conversation-catalog";
import { bakeOffCatalog, ZBakeOffConfig } from "./bake-off-catalog";
import { deliveryCatalog } from "./delivery-catalog";
import { forgeCatalog } from "./forge-catalog";
import { stepCatalog } from "./step-catalog";
import { pruningCatalog } from "./pruning-catalog";
import { teamCatalog } from "./team-catalog";
import { intakeCatalog } from "./intake-catalog";
import { defineEvent, EventRegistry, type EventUnionOf } from "./registry";
import type { FoldEvent } from "./types";

export const ZActor = z.object({
  kind: z.enum(["user", "agent", "runner", "system"]),
  id: z.string().min(1),
});
export type Actor = z.infer<typeof ZActor>;

/** How an actor is shown and stored in read models: `user:42`, `runner:r-1`, `system`. */
export function actorLabel({ kind, id }: Actor): string {
  return kind === "system" ? "system" : `${kind}:${id}`;
}

const ZFinding = z.object({
  severity: z.enum(["blocking", "major", "minor", "nit"]),
  file: z.string(),
  line: z.number().int().optional(),
  message: z.string(),
});

/** A session's spending limits (TaskStarted.budget). */
export const ZBudget = z.object({
  maxCalls: z.number().int().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  /** Tokens set aside for each call before it is made (0: check what was spent only). */
  reserveTokensPerCall: z.number().int().nonnegative().optional(),
  maxWallMs: z.number().int().positive().optional(),
});
export type Budget = z.infer<typeof ZBudget>;

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
      /** bake_off: a contender of a bake-off (docs/bake-off.md), forked at the confirm. */
      reason: z.enum(["rerun", "modify", "revert", "manual", "bake_off"]),
      title: z.string().min(1).max(500),
      workflow: z.string().min(1),
      state: z.string().min(1),
      /** Why, in the person's words. */
      note: z.string().max(2000).optional(),
      /** A fork at a finished position is a finished copy: the parent's outcome. */
      outcome: z.string().optional(),
    }),
    summary: (d) => `Forked from ${d.parentId} at event ${d.atVersion} (${d.reason})${d.note ? `: ${d.note}` : ""}`,
  }),
  /** An interrupted session (cancelled, failed, out of budget) continues where its work stopped. */
  SessionResumed: defineEvent({
    version: 1,
    schema: z.object({
      /** How it had ended. */
      from: z.string().min(1),
      /** The state entered again: the one whose work was interrupted. */
      state: z.string().min(1),
      /** A new budget, when the old one was spent. */
      budget: ZBudget.optional(),
    }),
    summary: (d) => `Resumed (it had ended ${d.from}): ${d.state} runs again`,
  }),
  /** A person asked for a change of a finished session's work (a modify fork). */
  ChangeRequested: defineEvent({
    version: 1,
    schema: z.object({
      text: z.string().min(1).max(20_000),
      baseSessionId: z.string().min(1),
      /** The code the change starts from: the base session's last commit. */
      baseCommit: z.string().min(1),
      /** The project's files as they are now, against the base session's (sha-1 blob ids, .gitignore respected). */
      fingerprint: z.object({
        files: z.number().int().nonnegative(),
        digest: z.string(),
        changedSinceBase: z.array(z.string()),
        addedSinceBase: z.array(z.string()),
        removedSinceBase: z.array(z.string()),
      }),
      /** The base session's plan tasks (id → sha-256 of the task), to count those the change kept. */
      basePlan: z.record(z.string(), z.string()),
    }),
    summary: (d) => `Change requested on ${d.baseSessionId}: ${d.text}`,
  }),
  SessionStateChanged: defineEvent({
    version: 1,
    schema: z.object({
      from: z.string(),
      to: z.string(),
      reason: z.string().optional(),
      /** The new state waits for a person (an operator's confirm): the session is in the attention inbox. */
      waitsFor: z.literal("person").optional(),
    }),
    summary: (d) => `State ${d.from} → ${d.to}${d.reason ? ` (${d.reason})` : ""}${d.waitsFor ? " — waits for a person" : ""}`,
  }),
  OperatorMessagePosted: defineEvent({
    version: 1,
    schema: z.object({ text: z.string().min(1).max(20_000) }),
    summary: (d) => `Message: ${d.text}`,
  }),

  // ---- Tasks (review loop, planning): the workflow engine's facts -------------------
  TaskStarted: defineEvent({
    version: 1,
    schema: z.object({
      workflow: z.string(),
      workflowVersion: z.number().int(),
      mode: z.string(),
      prompt: z.string().min(1),
      maxIterations: z.number().int().positive(),
      /** Snapshot of the project as the task started: replay never depends on later config. */
      project: z.object({
        id: z.string(),
        name: z.string(),
        repoPath: z.string(),
        baseCommit: z.string().regex(/^[0-9a-f]{40}$/),
        allowlist: z.array(z.array(z.string())),
        /** The session's commits go on the branch `<branchPrefix><session id>` (absent: no branch, sessions before branches). */
        branchPrefix: z.string().optional(),
      }),
      /** role → agent configuration (secrets are env var names, never values). */
      agents: ZAgentSnapshots,
      /**
       * The limits in force (settings.json with the project's overrides), used for every
       * step the session schedules. Absent from sessions started before they were
       * recorded: those keep the built-in defaults.
       */
      limits: ZRunLimits.optional(),
      /**
       * The MCP servers the agent CLIs are handed (the settings in force when the task
       * started; secrets by variable name only), for every step of the session and its
       * forks. Absent: none.
       */
      mcpServers: ZMcpServerSnapshots.optional(),
      /**
       * A user-defined workflow (.catcafe/runtimes.json) as it was when the task started,
       * checked again by the engine when read; built-in workflows are named by id and
       * version only.
       */
      definition: z.record(z.string(), z.unknown()).optional(),
      /**
       * The project had a webhook when the task started: each time the session needs a
       * person, a `webhook` step delivers the news (the URL is read when it is delivered
       * and never recorded: it may hold a token).
       */
      notify: z.boolean().optional(),
      /** A staged workflow: the stages with a person's gate (absent: every gate the definition has). */
      gates: z.array(z.string()).optional(),
      /** A staged workflow: iteration caps per stage, over the definition's. */
      stageCaps: z.record(z.string(), z.number().int().positive().max(50)).optional(),
      /** Spending limits, each reserved before an agent call is scheduled, so the overspend is at most one call. */
      budget: ZBudget.optional(),
      /**
       * Started from a conversation by `/task` (req W13): the conversation and the version of
       * its TaskStartedFromConversation, the command as recorded there. Absent: started as a task.
       */
      origin: z.object({ conversationId: z.string().min(1).max(100), version: z.number().int().positive() }).optional(),
      /**
       * A bake-off (docs/bake-off.md): at the confirm the session forks into one contender per
       * entry, each with its coder; a contender's own task has none (BakeOffContender clears it).
       */
      bakeOff: ZBakeOffConfig.optional(),
    }),
    summary: (d) => `Task started (${d.workflow}, ${d.mode} mode) on ${d.project.name}: ${d.prompt}`,
  }),
  IterationStarted: defineEvent({
    version: 1,
    /** `stage`: a staged workflow counts iterations per stage. */
    schema: z.object({ iteration: z.number().int().positive(), reason: z.string(), stage: z.string().optional() }),
    summary: (d) => `Iteration ${d.iteration}${d.stage ? ` of ${d.stage}` : ""} (${d.reason})`,
  }),
  AgentOutputRecorded: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      attempt: z.number().int().positive(),
      role: ZAgentRole,
      agentId: z.string(),
      /** discussion (roundtable prose) is shown apart from verdicts. */
      phase: ZStepPhase,
      raw: ZBlobRef,
      preview: z.string(),
      /** The verdict, test plan or TaskSpec the output parsed into; null for prose, builds and rejected output. */
      parsed: ZParsedOutput.nullable(),
      validationErrors: z.array(z.string()),
      simulated: z.boolean(),
      usage: ZAgentUsage.optional(),
    }),
    summary: (d) =>
      `${d.role} ${d.phase === "discussion" ? "said" : `(${d.phase})`}: ${d.validationErrors.length ? `INVALID: ${d.validationErrors[0]}` : d.preview}`,
  }),
  WorkspaceCommitted: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), ...ZWorkspaceCommit.shape }),
    summary: (d) => (d.empty ? "No files changed" : `Committed ${d.commit.slice(0, 10)}: ${d.changedFiles.map((f) => f.path).join(", ")}`),
  }),
  ReviewVerdictRecorded: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      decision: z.enum(["approve", "changes_requested"]),
      modelDecision: z.enum(["approve", "changes_requested"]),
      override: z.string().nullable(),
      summary: z.string(),
      findings: z.array(ZFinding),
    }),
    summary: (d) => `Verdict: ${d.decision}${d.override ? ` (${d.override})` : ""} — ${d.findings.length} finding(s)`,
  }),
  TestPlanRecorded: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      summary: z.string(),
      commands: z.array(ZTestCommandRecord),
    }),
    summary: (d) => `Test plan: ${d.commands.map((c) => c.argv.join(" ")).join("; ")}`,
  }),
  TestCommandRecorded: defineEvent({
    version: 1,
    /** One command of a commands step's output, with whether it passed. */
    schema: ZCommandResult.extend({ stepId: z.uuid(), index: z.number().int().nonnegative(), passed: z.boolean() }),
    summary: (d) =>
      `${d.passed ? "PASS" : "FAIL"} ${d.argv.join(" ")}${d.status === "refused" ? ` — refused${d.reason ? `: ${d.reason}` : ""}` : ` (exit ${d.exitCode})`}`,
  }),
  TaskSpecRecorded: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), spec: ZTaskSpec }),
    summary: () => "TaskSpec accepted",
  }),
  ExecutionRejected: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), reasons: z.array(z.string()).min(1) }),
    summary: (d) => `Execution rejected: ${d.reasons.join("; ")}`,
  }),
  OperatorConfirmed: defineEvent({
    version: 1,
    schema: z.object({ via: z.enum(["button", "command", "followup", "cli", "api"]) }),
    summary: (d) => `Operator confirmed the proposal (${d.via})`,
  }),
  SystemReplied: defineEvent({
    version: 1,
    schema: z.object({ text: z.string() }),
    summary: (d) => d.text,
  }),
  CancelRequested: defineEvent({
    version: 1,
    schema: z.object({ reason: z.string() }),
    summary: (d) => `Cancel requested: ${d.reason}`,
  }),
  SessionFinalized: defineEvent({
    version: 1,
    schema: z.object({
      outcome: z.string(),
      reason: z.string().nullable(),
      iterations: z.number().int().nonnegative(),
      unresolved: z.array(z.string()),
      errorClass: ZErrorClass.nullable(),
      diagnosis: z.string().nullable(),
    }),
    summary: (d) =>
      `Finished: ${d.outcome}${d.errorClass ? ` — ${d.errorClass}${d.diagnosis ? `: ${d.diagnosis}` : ""}` : d.reason ? ` (${d.reason})` : ""}`,
  }),

  /** A person took note of why the session is in the attention inbox (it leaves the inbox until it needs someone again). */
  AttentionAcknowledged: defineEvent({
    version: 1,
    schema: z.object({ attention: z.enum(["waiting", "escalated", "failed"]) }),
    summary: (d) => `Acknowledged (${d.attention})`,
  }),

  // ---- Staged workflows (req F1–F14): stages, gates, a person asked, the budget. The engine's
  // own facts for any workflow with stages; Forge's artifacts and critiques: forge-catalog.ts.
  StageStarted: defineEvent({
    version: 1,
    schema: z.object({ stage: z.string() }),
    summary: (d) => `Stage ${d.stage} started`,
  }),
  /** The stage's artifacts as it completed: from now on they are immutable. */
  StageCompleted: defineEvent({
    version: 1,
    schema: z.object({ stage: z.string(), artifacts: z.array(z.object({ path: z.string(), hash: z.string() })) }),
    summary: (d) => `Stage ${d.stage} completed (${d.artifacts.map((a) => a.path).join(", ") || "no artifacts"})`,
  }),
  /** A completed stage opened again by the workflow itself (a failed check back into coding). */
  StageReopened: defineEvent({
    version: 1,
    schema: z.object({ stage: z.string(), reason: z.string() }),
    summary: (d) => `Stage ${d.stage} reopened (${d.reason})`,
  }),
  GatePassed: defineEvent({
    version: 1,
    schema: z.object({ stage: z.string() }),
    summary: (d) => `A person passed the ${d.stage} draft`,
  }),
  /** A person's feedback at a gate, or guidance after a failure (critical): it goes into the actor's next prompt. */
  FeedbackGiven: defineEvent({
    version: 1,
    schema: z.object({
      stage: z.string().nullable(),
      iteration: z.number().int().positive(),
      source: z.enum(["person", "guidance"]),
      severity: z.enum(["normal", "critical"]),
      text: z.string().min(1).max(20_000),
    }),
    summary: (d) => `${d.source === "guidance" ? "Guidance" : "Feedback"} on ${d.stage ?? "the session"}: ${d.text}`,
  }),
  /** The pipeline stops for a person: a loop, the cap, or an agent that failed beyond its retries. */
  PersonNeeded: defineEvent({
    version: 1,
    schema: z.object({
      stage: z.string().nullable(),
      cause: z.enum(["loop", "cap", "agent_failed"]),
      message: z.string(),
      errorClass: ZErrorClass.nullable(),
      /** The state to go back to on retry (agent_failed). */
      resume: z.string().nullable(),
    }),
    summary: (d) => `A person is needed (${d.cause}${d.stage ? `, ${d.stage}` : ""}): ${d.message}`,
  }),
  PersonChose: defineEvent({
    version: 1,
    schema: z.object({ choice: z.enum(["retry", "guidance", "abort"]) }),
    summary: (d) => `A person chose ${d.choice}`,
  }),
  BudgetExhausted: defineEvent({
    version: 1,
    schema: z.object({
      limit: z.enum(["calls", "tokens", "wall"]),
      used: z.object({ calls: z.number().int().nonnegative(), tokens: z.number().int().nonnegative(), wallMs: z.number().nonnegative() }),
      budget: ZBudget,
      /** The state the budget could not pay for (a resume enters it). */
      state: z.string().optional(),
    }),
    summary: (d) => `Budget exhausted (${d.limit}): ${d.used.calls} calls, ${d.used.tokens} tokens, ${Math.round(d.used.wallMs / 1000)} s`,
  }),
  ...stepCatalog,
  ...configCatalog,
  ...forgeCatalog,
  ...conversationCatalog,
  ...deliveryCatalog,
  ...bakeOffCatalog,
  ...pruningCatalog,
  ...teamCatalog,
  ...intakeCatalog,
} as const;

export type AppEventCatalog = typeof eventCatalog;
export type AppEvent = EventUnionOf<AppEventCatalog>;
export type AppEventType = AppEvent["type"];
/** One event type of the catalog, with its typed data. */
export type AppEventOf<T extends AppEventType> = Extract<AppEvent, { type: T }>;

export const appRegistry = new EventRegistry(eventCatalog);

/** An event as a fold reads it (version, type, data, time), typed by the catalog. */
export type AppFoldEvent = FoldEvent & AppEvent;

/**
 * Whether the catalog declares the event's type, which then types its data: the registry
 * validated the data when it was appended and upcasts it when read: replay reads trust the
 * write (docs/architecture.md, "Forks and replay"), so a fold needs no second validation.
 */
export function isAppEvent(event: FoldEvent): event is AppFoldEvent {
  return Object.hasOwn(eventCatalog, event.type);
}
