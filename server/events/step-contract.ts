// The step contract as the log records it: what the workflow engine schedules a step with
// (StepScheduled.input), what the runner hands back (StepCompleted.output), and the agents
// a task runs with (TaskStarted.agents). The catalog validates these fields at append, so
// the engine, the reactor and the runner's executors read them typed, without casts.
//
// The log is forever: every shape written so far must still parse here. A change that would
// reject an old shape needs a new event version with an upcaster (registry.ts).
import { z } from "zod";
import { ZAgentRole, ZAgentUsage, ZThreadMessage } from "../agent-calls";
import { ZErrorClass } from "../errors";
import { ZBlobRef } from "./blobs";

/** How a step's output is shown: roundtable discussion apart from verdicts. */
export const STEP_PHASES = ["discussion", "build", "verdict", "test", "plan", "execute", "draft", "critique"] as const;
export const ZStepPhase = z.enum(STEP_PHASES);
export type StepPhase = z.infer<typeof ZStepPhase>;

/** What a step's output is checked against (the engine's OUTPUT_KINDS says which triggers each fires). */
export const STEP_OUTPUTS = [
  "text",
  "build",
  "review_verdict",
  "test_plan",
  "commands",
  "task_spec",
  "execution",
  "draft",
  "critique",
  "route",
] as const;
export const ZStepOutputKind = z.enum(STEP_OUTPUTS);
export type StepOutputKind = z.infer<typeof ZStepOutputKind>;

export const ZArgv = z.array(z.string()).min(1);

/** A test command as recorded: a validated TestPlan's command (TestPlanRecorded, StepInput.commands). */
export const ZTestCommandRecord = z.object({
  argv: ZArgv,
  description: z.string().optional(),
  expect: z.object({ exitCode: z.number().int() }),
});

/**
 * An agent's configuration as a task recorded it. Its full schema (ZAgentConfig) is checked
 * where agents are chosen (bindRun, before a task starts) and created (the runner, before
 * each step). The event pins what the engine itself reads, the manifest's file globs, and
 * keeps the rest exactly as recorded (secrets by variable name only, never values).
 */
export const ZAgentSnapshot = z.looseObject({
  id: z.string().optional(),
  kind: z.string().optional(),
  manifest: z.looseObject({ allowedFiles: z.array(z.string()).optional() }).optional(),
});
export type AgentSnapshot = z.infer<typeof ZAgentSnapshot>;

/** Role → the agent that plays it, as the task started (TaskStarted.agents). */
export const ZAgentSnapshots = z.partialRecord(ZAgentRole, ZAgentSnapshot);
export type AgentSnapshots = z.infer<typeof ZAgentSnapshots>;

/**
 * An MCP server handed to the agent CLIs, as a task recorded it (TaskStarted.mcpServers,
 * StepInput.mcpServers): secrets by variable name only. Its full schema (ZMcpServer,
 * server/agents/mcp.ts) is checked where the settings are read and again by the runner.
 */
export const ZMcpServerSnapshot = z.looseObject({ name: z.string() });
export const ZMcpServerSnapshots = z.array(ZMcpServerSnapshot);

/** The limits a task runs with (TaskStarted.limits): from settings.json and the project's overrides. */
export const ZRunLimits = z.object({
  /** How long one attempt of an agent step may run. */
  stepTimeoutMs: z.number().int().positive(),
  /** Attempts per agent step, the first included (1 = never retry). */
  maxAttempts: z.number().int().positive(),
  /** Waits before the 2nd, 3rd, ... attempt; the last repeats. */
  backoffMs: z.array(z.number().int().nonnegative()).min(1),
  /** How long one allowlisted test command may run. */
  commandTimeoutMs: z.number().int().positive(),
});
export type RunLimits = z.infer<typeof ZRunLimits>;

/** The input snapshot a workflow step is scheduled with: everything the runner needs, nothing more. */
export const ZStepInput = z.object({
  workflow: z.string(),
  /** The workflow state that runs the step. */
  state: z.string(),
  role: ZAgentRole,
  phase: ZStepPhase,
  output: ZStepOutputKind,
  prompt: z.string(),
  /**
   * The first characters of `prompt` that are the same for every call of the session (the task,
   * the TaskSpec: docs/scaling.md, "Prompt economics"); the agent is shown them before the thread.
   * Absent in steps scheduled before it was recorded: none.
   */
  promptStableChars: z.number().int().nonnegative().optional(),
  /** The end of the session's thread, oldest first. */
  context: z.array(ZThreadMessage),
  /** Null when the task recorded no agent for the role (the runner fails the step). */
  agent: ZAgentSnapshot.nullable(),
  /** Earlier invocations of this role in the session (the runner adds attempt − 1). */
  invocation: z.number().int().nonnegative(),
  /** `bundle`: the latest bundle of the session (informational: a runner whose clone lacks `head` restores the chain from the session's events, server/events/bundle-chain.ts). */
  workspace: z.object({
    repoPath: z.string(),
    baseCommit: z.string(),
    head: z.string(),
    bundle: ZBlobRef.nullable().optional(),
    /** Each commit also moves the branch `<branchPrefix><session id>` (absent: no branch). */
    branchPrefix: z.string().optional(),
  }),
  /** Diff to show the agent (reviewer, tester): a blob the runner loads. */
  diff: ZBlobRef.nullable(),
  /**
   * Where in `context` the diff is shown: right after the message at this index (the build that
   * made it), so the next call, whose thread goes on from there, repeats it as a prefix
   * (docs/scaling.md, "Prompt economics"). Absent: after the thread, with this call's instruction.
   */
  diffAfterMessage: z.number().int().nonnegative().optional(),
  /** The test plan's commands, for a commands step. */
  commands: z.array(ZTestCommandRecord),
  allowlist: z.array(z.array(z.string())),
  /** MCP servers for an agent CLI, as the task recorded them (absent: none). */
  mcpServers: ZMcpServerSnapshots.optional(),
  /** Per test command (a commands step); absent: the command runner's default (30 s). */
  commandTimeoutMs: z.number().int().positive().optional(),
  /** A staged workflow's step (Forge): what the runner writes first, guards, and collects after. */
  forge: z
    .object({
      stage: z.string(),
      /** The stage's iteration (1 when it starts). */
      iteration: z.number().int().positive(),
      /** Gitignore-style globs of what the agent may write; the runner discards every other change. */
      writes: z.array(z.string()),
      /** The stage's artifacts: read after the agent ran, each stored as a blob and recorded by hash. */
      collect: z.array(z.string()),
      /** Files written before the agent runs: the artifacts as recorded (a person's edit among them). */
      materialize: z.array(z.object({ path: z.string(), blob: ZBlobRef })),
      /** A person's edits the agent's redraft must keep: merged three-way (git merge-file), the person's text winning. */
      protect: z.array(z.object({ path: z.string(), base: ZBlobRef.nullable(), edited: ZBlobRef })),
      /**
       * Artifacts whose text is added to the prompt (written in the worktree too; an HTTP brain sees
       * only its prompt): each right after the message in `context` of the step that wrote its
       * version (`afterMessage`), where it stays for the rest of the session, so every later call
       * repeats it as a prefix; those written before the thread's window, before the thread
       * (docs/scaling.md, "Prompt economics").
       */
      attach: z.array(z.object({ path: z.string(), blob: ZBlobRef, afterMessage: z.number().int().nonnegative().optional() })),
      /** feedback_history.json as the session's events say it is. */
      feedbackHistory: z.string(),
      /** The step belongs to a modify session (a scripted agent may play its stage's modify script). */
      modifying: z.boolean().optional(),
      /** A modify session's report step: the runner writes patch.json from git (base → the code now) and the report's Patch section. */
      patch: z
        .object({
          baseCommit: z.string(),
          /** The base plan's tasks against the plan as recorded now (kept, changed, added, removed). */
          tasks: z.object({ kept: z.number().int(), changed: z.number().int(), added: z.number().int(), removed: z.number().int() }),
        })
        .optional(),
    })
    .optional(),
});
export type StepInput = z.infer<typeof ZStepInput>;
export type ForgeStepInput = NonNullable<StepInput["forge"]>;

export const ZChangedFile = z.object({
  path: z.string(),
  status: z.enum(["added", "modified", "deleted", "renamed"]),
  previousPath: z.string().optional(),
});
export type ChangedFile = z.infer<typeof ZChangedFile>;

/** A build's commit, as the step reports it and WorkspaceCommitted records it. */
export const ZWorkspaceCommit = z.object({
  commit: z.string(),
  parent: z.string(),
  empty: z.boolean(),
  changedFiles: z.array(ZChangedFile),
  diff: ZBlobRef,
  /**
   * The commits this build added as a git bundle, made since `bundleSince`: how the work
   * reaches a runner on another machine, which fetches the chain of bundles it lacks
   * (docs/scaling.md#bundles; absent before bundles existed).
   */
  bundle: ZBlobRef.optional(),
  /**
   * The bundle's prerequisite: the commit the build started from (the previous bundle's
   * commit, the base commit for the first, a fork's starting commit for a fork's first).
   * Absent with a bundle: every commit since the base (recorded before bundles were incremental).
   */
  bundleSince: z.string().optional(),
});

/** What an agent step hands back: its reply (a blob) and, for builds, the commit it made. */
export const ZAgentStepOutput = z.object({
  kind: z.literal("agent"),
  agentId: z.string(),
  raw: ZBlobRef,
  preview: z.string(),
  simulated: z.boolean(),
  usage: ZAgentUsage.optional(),
  /** Values of the server's secrets found in the reply and replaced before it was recorded. */
  redactions: z.number().int().nonnegative().optional(),
  /** Whether the agent's process ran in the sandbox (absent for brains called over HTTP). */
  sandboxed: z.boolean().optional(),
  /** An agent CLI's tool calls: how many finished, how many failed. */
  tools: z.object({ calls: z.number().int().nonnegative(), failed: z.number().int().nonnegative() }).optional(),
  /** Connections the run's egress proxy refused (`host:port`, each once, the first 20): where the agent tried to go and may not. */
  egressRefused: z.array(z.string()).max(20).optional(),
  commit: ZWorkspaceCommit.optional(),
  /** A staged workflow's step: what it produced and what the runner refused or held back. */
  forge: z
    .object({
      artifacts: z.array(z.object({ path: z.string(), hash: z.string(), blob: ZBlobRef, size: z.number().int().nonnegative() })),
      /** Paths the agent changed outside its stage's globs: discarded before the commit. */
      refusedWrites: z.array(z.string()),
      /** A person's edit the redraft would have overwritten: the person's text was kept, the agent's draft held here. */
      held: z.array(z.object({ path: z.string(), hash: z.string(), blob: ZBlobRef, conflicts: z.number().int().nonnegative() })),
      /** Non-fatal problems (a file the runner could not read). */
      warnings: z.array(z.string()),
    })
    .optional(),
});
export type AgentStepOutput = z.infer<typeof ZAgentStepOutput>;

/** One test command as the allowlist runner ran (or refused) it. */
export const ZCommandResult = z.object({
  argv: ZArgv,
  status: z.enum(["ran", "refused"]),
  exitCode: z.number().int().nullable(),
  expectedExitCode: z.number().int(),
  durationMs: z.number().nonnegative(),
  stdoutTail: z.string(),
  stderrTail: z.string(),
  errorClass: ZErrorClass.nullable(),
  reason: z.string().nullable(),
  /** Values of the server's secrets found in the output and replaced before it was recorded. */
  redactions: z.number().int().nonnegative().optional(),
  /** Whether the command ran in the sandbox. */
  sandboxed: z.boolean().optional(),
});
export type CommandResultOutput = z.infer<typeof ZCommandResult>;

export const ZCommandsStepOutput = z.object({ kind: z.literal("commands"), results: z.array(ZCommandResult) });
export type CommandsStepOutput = z.infer<typeof ZCommandsStepOutput>;

/** What a workflow step hands back to the engine (StepCompleted.output). */
export const ZStepOutput = z.discriminatedUnion("kind", [ZAgentStepOutput, ZCommandsStepOutput]);
export type StepOutput = z.infer<typeof ZStepOutput>;

// ---- The step events' data ---------------------------------------------------------------
// The runner's queue also runs steps of other kinds (its own `echo`, tests' steps) whose
// input and output are free JSON. The kind decides: a workflow kind's input must be a
// StepInput, and an output shaped like a workflow output (kind agent | commands) must be
// a StepOutput, so `isWorkflowStep` / `isWorkflowStepOutput` can narrow what was read.

/** The step kinds the workflow engine schedules. */
export const WORKFLOW_STEP_KINDS = ["agent", "commands"] as const;
export type WorkflowStepKind = (typeof WORKFLOW_STEP_KINDS)[number];

export function isWorkflowStepKind(kind: unknown): kind is WorkflowStepKind {
  return (WORKFLOW_STEP_KINDS as readonly unknown[]).includes(kind);
}

const ZJson = z.json();

/** `value` parsed by `schema` inside a transform, its issues reported under `path`. */
function parsedWithin<S extends z.ZodType>(schema: S, value: unknown, ctx: z.RefinementCtx, path: PropertyKey[]): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: [...path, ...issue.path] });
  return z.NEVER;
}

/** StepScheduled's data. */
export const ZStepScheduled = z
  .object({
    stepId: z.uuid(),
    kind: z.string().min(1),
    input: z.unknown(),
    timeoutMs: z.number().int().positive(),
    maxAttempts: z.number().int().positive(),
    /** Waits before the 2nd, 3rd, ... attempt (the last repeats); absent: the runner's default backoff. */
    backoffMs: z.array(z.number().int().nonnegative()).min(1).optional(),
    availableAt: z.iso.datetime({ offset: true }).optional(),
  })
  .transform((step, ctx) =>
    isWorkflowStepKind(step.kind)
      ? { ...step, kind: step.kind, input: parsedWithin(ZStepInput, step.input, ctx, ["input"]) }
      : { ...step, input: parsedWithin(ZJson, step.input, ctx, ["input"]) },
  );
export type StepScheduledData = z.infer<typeof ZStepScheduled>;
export type WorkflowStepScheduled = Extract<StepScheduledData, { kind: WorkflowStepKind }>;

/** A step the workflow engine scheduled (its input is a StepInput). */
export function isWorkflowStep(step: StepScheduledData): step is WorkflowStepScheduled {
  return isWorkflowStepKind(step.kind);
}

function hasWorkflowKind(output: unknown): boolean {
  return typeof output === "object" && output !== null && "kind" in output && isWorkflowStepKind(output.kind);
}

/** StepCompleted.output: a StepOutput for workflow steps, free JSON for other kinds. */
export const ZStepResult = z
  .unknown()
  .transform((output, ctx) =>
    hasWorkflowKind(output) ? parsedWithin(ZStepOutput, output, ctx, []) : parsedWithin(ZJson, output, ctx, []),
  );
export type StepResult = z.infer<typeof ZStepResult>;

/** The output of a workflow step (agent or commands). */
export function isWorkflowStepOutput(output: StepResult): output is StepOutput {
  return hasWorkflowKind(output);
}
