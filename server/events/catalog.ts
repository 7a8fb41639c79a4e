// Every event type Cat Cafe records, declared once. Domains add their types here so
// that one registry validates every append and every read.
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
  ZStepResult,
  ZStepScheduled,
  ZTestCommandRecord,
  ZWorkspaceCommit,
} from "./step-contract";
import { conversationCatalog } from "./conversation-catalog";
import { deliveryCatalog } from "./delivery-catalog";
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

const ZJson = z.json();

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

const ZArtifactVersion = {
  stage: z.string(),
  path: z.string(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  blob: ZBlobRef,
  size: z.number().int().nonnegative(),
  /** A JSON artifact's parsed value (what the rules read); absent for markdown and for invalid JSON. */
  json: ZJson.optional(),
  /** Schema and rule problems of this version. */
  problems: z.array(z.string()),
};
const ZForgeFinding = z.object({
  id: z.string(),
  severity: z.enum(["blocking", "major", "minor"]),
  message: z.string(),
  /** Who found it: the critic, or the rules checked by code. */
  source: z.enum(["critic", "rule"]),
});

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
      /** Taken over from a runner whose lease expired (a lost attempt, not charged to the step). */
      reclaimed: z.boolean().optional(),
    }),
    summary: (d) => `Step started (attempt ${d.attempt}) on runner ${d.runnerId}`,
  }),
  StepCompleted: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), attempt: z.number().int().positive(), output: ZStepResult }),
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
  StepCancelled: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid() }),
    summary: () => "Running step cancelled",
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

  // ---- Brains: the shared per-brain rate limit (req R5) -----------------------------
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

  // ---- Runtime execution context (req M6): the configuration a run executes with ----
  RuntimeContextRecorded: defineEvent({
    version: 1,
    schema: z.object({
      runId: z.string().min(1),
      createdAt: z.iso.datetime({ offset: true }),
      /** Where the configuration came from: the repository's `.catcafe/` at the base commit. */
      source: z.object({
        dir: z.string(),
        commit: z.string().regex(/^[0-9a-f]{40}$/),
        files: z.array(z.string()),
        configVersion: z.string(),
      }),
      /** Global settings as they applied (timeouts, retry policy, rate limit, defaults). */
      settings: ZJson,
      /** projects.json as it applied. */
      project: ZJson,
      /** role → the agent that plays it, from `.catcafe/` (config) or the project record. */
      roles: z.record(z.string(), z.object({ agentId: z.string(), source: z.enum(["config", "project"]) })),
      /** agent id → agent, shell, brain and FSM snapshot; secrets redacted, key variables by name only. */
      agents: z.record(z.string(), ZJson),
      /** The MCP servers handed to the agent CLIs (as TaskStarted records them; absent before they existed). */
      mcpServers: z.array(ZJson).optional(),
    }),
    summary: (d) =>
      `Runtime context ${d.runId}: ${Object.entries(d.roles)
        .map(([role, a]) => `${role}=${a.agentId}`)
        .join(", ")} (.catcafe ${d.source.configVersion} at ${d.source.commit.slice(0, 10)})`,
  }),
  /** A person took note of why the session is in the attention inbox (it leaves the inbox until it needs someone again). */
  AttentionAcknowledged: defineEvent({
    version: 1,
    schema: z.object({ attention: z.enum(["waiting", "escalated", "failed"]) }),
    summary: (d) => `Acknowledged (${d.attention})`,
  }),
  /**
   * An admin changed configuration in the dashboard or the API: a project's record
   * (stream `config-project-<id>`) or the server's settings overrides (`config-server`).
   * Each change names the path and the values before and after; a revert is a change too.
   */
  ConfigChanged: defineEvent({
    version: 1,
    schema: z.object({
      scope: z.enum(["project", "server"]),
      projectId: z.string().nullable(),
      changes: z
        .array(z.object({ path: z.array(z.union([z.string(), z.number()])).min(1), from: ZJson.optional(), to: ZJson.optional() }))
        .min(1),
      /** The version (in this stream) of the change this one undoes. */
      revertOf: z.number().int().positive().optional(),
    }),
    summary: (d) =>
      `${d.scope === "server" ? "Server settings" : `Project ${d.projectId}`}${d.revertOf ? ` (revert of #${d.revertOf})` : ""}: ${d.changes
        .map((c) => `${c.path.join(".")} ${JSON.stringify(c.from ?? null)} → ${JSON.stringify(c.to ?? null)}`)
        .join("; ")}`,
  }),

  // ---- Staged workflows (the Forge pipeline, req F1–F14) ---------------------------------
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
  ArtifactRecorded: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), ...ZArtifactVersion }),
    summary: (d) =>
      `${d.path} drafted (${d.hash.slice(0, 10)}, ${d.size} bytes)${d.problems.length ? ` — ${d.problems.length} problem(s)` : ""}`,
  }),
  /** A person's edit of a draft: the hash it was made on and the new text (a blob). */
  ArtifactEdited: defineEvent({
    version: 1,
    schema: z.object({ baseHash: z.string().nullable(), ...ZArtifactVersion }),
    summary: (d) => `${d.path} edited by a person (${d.baseHash?.slice(0, 10) ?? "new"} → ${d.hash.slice(0, 10)})`,
  }),
  /** A write the stage does not allow: an agent's outside its globs, or anyone's to a completed stage. */
  ArtifactWriteRefused: defineEvent({
    version: 1,
    schema: z.object({
      stage: z.string().nullable(),
      stepId: z.uuid().optional(),
      by: z.enum(["agent", "person"]),
      paths: z.array(z.string()).min(1),
      reason: z.string(),
    }),
    summary: (d) => `Write refused (${d.by}): ${d.paths.join(", ")} — ${d.reason}`,
  }),
  /** A redraft that would have overwritten a person's edit: the person's text was kept; the agent's version waits here. */
  ArtifactDraftHeld: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      stage: z.string(),
      path: z.string(),
      hash: z.string(),
      blob: ZBlobRef,
      conflicts: z.number().int().nonnegative(),
    }),
    summary: (d) => `${d.path}: the agent's redraft conflicts with a person's edit in ${d.conflicts} place(s); the person's text was kept`,
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
  CritiqueRecorded: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      stage: z.string(),
      /** The critiques of the stage so far, this one included. */
      round: z.number().int().positive(),
      decision: z.enum(["pass", "revise", "escalate"]),
      modelDecision: z.enum(["pass", "revise"]),
      summary: z.string(),
      findings: z.array(ZForgeFinding),
      loop: z.object({
        similarity: z.number().nullable(),
        persisted: z.array(z.string()),
        reopened: z.array(z.string()),
        stalled: z.boolean(),
        warning: z.string().nullable(),
        escalate: z.string().nullable(),
      }),
    }),
    summary: (d) =>
      `Critique of ${d.stage} (round ${d.round}): ${d.decision}${d.findings.length ? ` — ${d.findings.filter((f) => f.severity === "blocking").length} blocking` : ""}${d.loop.escalate ? ` — ${d.loop.escalate}` : d.loop.warning ? ` — warning: ${d.loop.warning}` : ""}`,
  }),
  /** A failed check's triage: the stage the failure goes back to (req F13). */
  CheckRouted: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), goto: z.enum(["prd", "design", "plan", "coding"]), reason: z.string() }),
    summary: (d) => `The failed check goes back to ${d.goto}: ${d.reason}`,
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
  /** Task status from the coder's code_metadata.json, cascaded to each feature. */
  ProgressRecorded: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      tasks: z.array(z.object({ id: z.string(), status: z.enum(["pending", "in_progress", "done"]) })),
      features: z.array(
        z.object({ id: z.string(), status: z.enum(["pending", "in_progress", "done"]), tasks: z.number().int(), done: z.number().int() }),
      ),
    }),
    summary: (d) => `Progress: ${d.features.map((f) => `${f.id} ${f.status} (${f.done}/${f.tasks})`).join(", ")}`,
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
  ForgeWarning: defineEvent({
    version: 1,
    schema: z.object({ stage: z.string().nullable(), message: z.string() }),
    summary: (d) => `Warning${d.stage ? ` (${d.stage})` : ""}: ${d.message}`,
  }),
  ...conversationCatalog,
  ...deliveryCatalog,
} as const;

export type AppEventCatalog = typeof eventCatalog;
export type AppEvent = EventUnionOf<AppEventCatalog>;
export type AppEventType = AppEvent["type"];
/** One event type of the catalog, with its typed data. */
export type AppEventOf<T extends AppEventType> = Extract<AppEvent, { type: T }>;

export const appRegistry = new EventRegistry(eventCatalog);
