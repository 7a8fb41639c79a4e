// The workflow's step kinds: `agent` steps invoke the configured agent in the session
// workspace (committing a coder's edits), `commands` steps run a test plan through the
// allowlist runner; the session's workflow decides on each outcome. Raw outputs go to blobs;
// events carry references.
import type { NewEvent } from "../events/types";
import fs from "node:fs";
import path from "node:path";
import type { Db, Tx } from "../db/pool";
import { createAgent, invokeAgent, usageOf, ZAgentConfig } from "../agents";
import { ZMcpServers } from "../agents/mcp";
import { AgentError, type AgentRequest, type AgentResponse } from "../agents/types";
import { databaseCallGate } from "../brains/rate-limit";
import { classifyCommandOutcome, type CommandFailure } from "../commands/classify";
import { runCommand, type CommandRun } from "../commands/run";
import { putBlob } from "../events/blobs";
import { sessionBundles } from "../events/bundle-chain";
import {
  ZAgentStepOutput,
  ZCommandsStepOutput,
  ZStepInput,
  type AgentStepOutput,
  type CommandResultOutput,
  type CommandsStepOutput,
  type StepInput,
  type StepOutput,
} from "../events/step-contract";
import type { EventStore } from "../events/store";
import { isAppError } from "../errors";
import {
  bundleSession,
  claimWorkspace,
  CleanWorktrees,
  commitWorkspace,
  createWorkspace,
  DeliveryProblem,
  diffSince,
  ensureCommit,
  fetchSessionCommit,
  KnownClones,
  pushSessionBranch,
  repositoryMapping,
  resetWorkspace,
  workspaceAtCommit,
  type SessionRemote,
} from "../workspaces";
import { withWorktreeLock } from "./repo-lock";
import { recordWorktreePlaced, runnerHost } from "./worktree-placement";
import { logger } from "../log";
import { recordableOutput } from "../process/env";
import { checkedAgentAccess } from "./agent-access";
import { appendWhileHeld, holdsStep, type ClaimedStep } from "./dispatch";
import type { WorkflowReactor } from "../workflow/reactor";
import { notRunnableWhenNotFound, StepExecutionError, StepNotRunnableHere, type StepContext } from "./executors";
import { filesReplyInstruction, worktreeView, writeFilesReply, writesFiles } from "./files-reply";
import { finishForgeStep, prepareForgeStep } from "./forge-steps";
import { FORGE_DIR } from "../forge/artifacts";
import { OutputStreamer } from "./output-streamer";
import { defineStepKind, type InvalidInput, type ReactionFailure, type StepKind, type StepReaction } from "./step-kinds";

export interface WorkflowExecutorDeps {
  pool: Db;
  /** The application's event store (streamed output and rate-limit waits are appended there). */
  store: EventStore;
  /** Where session worktrees live (outside every project). */
  workspacesRoot: string;
  /**
   * This runner's clone of a project registered at `repoPath` (CATCAFE_REPOSITORY_PATHS),
   * for runners on other machines; the registered path itself by default.
   */
  repositoryPath?: (repoPath: string) => string;
  /** This runner's host, recorded with each worktree it creates (pruning/worktrees.ts); the hostname by default. */
  host?: string;
  /**
   * The remote that is the home of a session's branch (its project's delivery remote, with the
   * token from this runner's environment), read when a step needs it; absent or null: none, the
   * registered repository is the home (docs/delivery.md, "The remote is the home").
   */
  sessionRemote?: (sessionId: string) => Promise<SessionRemote | null>;
  /** Sees each agent request as it is made (the bench's prompt_cacheable_share reads the prompts); never changes it. */
  observeAgentRequest?: (sessionId: string, request: Readonly<AgentRequest>) => void;
  /**
   * The hosts on non-public addresses a session's HTTP brains may call: access.privateHosts
   * in force for its project, read when the step runs (server/projects/access.ts). Absent: none.
   */
}

const PREVIEW_CHARS = 2000;
const TAIL_CHARS = 4000;
const MAX_DIFF_IN_PROMPT = 200_000;

/** What one runner process keeps for its next steps (one per process: shared by all its steps). */
interface RunnerLocal {
  clones: KnownClones;
  worktrees: CleanWorktrees;
}

/**
 * The session's worktree at `head`: created on first use (one worktree operation per
 * repository at a time), reset (clean) on every later step unless this runner left it clean
 * as the step before ended (CleanWorktrees), and claimed by this attempt so that an earlier
 * attempt still running somewhere cannot commit into it.
 */
async function prepareWorkspace(
  deps: WorkflowExecutorDeps,
  { clones, worktrees }: RunnerLocal,
  step: ClaimedStep,
  input: StepInput,
): Promise<string> {
  const repoPath = deps.repositoryPath?.(input.workspace.repoPath) ?? input.workspace.repoPath;
  // A step may start from a commit made on another runner's machine: fetch it from the
  // project's remote, else the chain of the session's bundles that leads to it, when this
  // clone lacks it. A clone that is not here, or a commit it cannot restore, hands the step
  // to another runner (StepNotRunnableHere) instead of failing the session (docs/scaling.md,
  // "Which runner runs a step").
  const missing = await clones.missing(repoPath, repositoryMapping(input.workspace.repoPath, repoPath));
  if (missing) throw new StepNotRunnableHere(missing);
  const target = path.join(deps.workspacesRoot, step.sessionId);
  // The session's worktree of this clone at the step's head already proves the clone has the
  // commit: nothing to fetch or restore, and no git process to ask (docs/scaling.md, "First
  // output and live paint").
  if (!workspaceAtCommit(target, repoPath, input.workspace.head)) {
    await fetchFromRemote(deps, step.sessionId, repoPath, input);
    await ensureCommit(repoPath, input.workspace.head, sessionBundles(deps.pool, step.sessionId), (fn) =>
      withWorktreeLock(deps.pool, repoPath, fn),
    ).catch(notRunnableWhenNotFound);
  }
  if (fs.existsSync(target)) {
    // Read before the claim, which changes what it compares.
    const untouched = worktrees.untouched(target, input.workspace.head);
    await claimWorkspace(target, ownerOf(step));
    if (!untouched) await resetWorkspace(target, input.workspace.head);
    return target;
  }
  const ws = await withWorktreeLock(deps.pool, repoPath, () =>
    createWorkspace({
      repoPath,
      workspacesRoot: deps.workspacesRoot,
      sessionId: step.sessionId,
      baseCommit: input.workspace.head,
    }),
  );
  await claimWorkspace(ws.path, ownerOf(step));
  await recordWorktreePlaced(deps.store, step, runnerHost(deps.host), ws.path);
  return ws.path;
}

/**
 * The step's head from the session's branch on the project's remote, when this clone lacks it
 * and the project has one. Only tried: a remote that cannot be reached (or lacks the branch)
 * leaves it to the session's bundle (ensureCommit), logged.
 */
async function fetchFromRemote(deps: WorkflowExecutorDeps, sessionId: string, repoPath: string, input: StepInput): Promise<void> {
  const { sessionRemote } = deps;
  if (!sessionRemote || input.workspace.branchPrefix === undefined || !fs.existsSync(repoPath)) return;
  const fetched = await fetchSessionCommit({
    repoPath,
    remote: () => sessionRemote(sessionId),
    branch: `${input.workspace.branchPrefix}${sessionId}`,
    commit: input.workspace.head,
  });
  if (fetched.outcome === "unreachable")
    logger.warn({ sessionId, reason: fetched.reason }, "the project's remote could not be reached; the session's bundle is used");
}

/**
 * A build's commit pushed to the session's branch on the project's remote (req: branches the
 * same from every host; docs/delivery.md, "The remote is the home"), with the step's expected
 * head as the lease's ground: a stale attempt never moves it back. A failure does not fail the
 * build: the commit is committed and bundled, so the session goes on and other runners still
 * get it (from the bundle); retrying the step would run the agent again for a push. The failure
 * is recorded (SessionBranchPushFailed) and mended by the next build's push (it carries every
 * earlier commit) or by the delivery (which pushes the branch again).
 */
async function pushToRemote(deps: WorkflowExecutorDeps, step: ClaimedStep, input: StepInput, commit: string): Promise<void> {
  const { sessionRemote } = deps;
  if (!sessionRemote || input.workspace.branchPrefix === undefined) return;
  const branch = `${input.workspace.branchPrefix}${step.sessionId}`;
  const repoPath = deps.repositoryPath?.(input.workspace.repoPath) ?? input.workspace.repoPath;
  let home: SessionRemote | null = null;
  try {
    home = await sessionRemote(step.sessionId);
    if (!home) return;
    const pushed = await pushSessionBranch({ repoPath, remote: home, branch, commit, stillHeld: () => holdsStep(deps.pool, step) });
    if (pushed === "stale") logger.info({ sessionId: step.sessionId, stepId: step.id, branch }, "a stale attempt's build: not pushed");
  } catch (err) {
    // Git never prints the token (it goes in GIT_CONFIG_*); taken out all the same, as the delivery's Test does.
    const said = err instanceof Error ? err.message : String(err);
    const message = (home?.token ? said.split(home.token).join("[token]") : said).slice(0, 2000);
    const errorClass = err instanceof DeliveryProblem ? err.problemClass : "internal_error";
    logger.warn(
      { sessionId: step.sessionId, stepId: step.id, branch, errorClass, err: message },
      "could not push the build to the project's remote",
    );
    const data = { stepId: step.id, attempt: step.attempt, branch, commit, remote: home?.remote ?? "", errorClass, message };
    await appendWhileHeld(deps.store, step, [{ type: "SessionBranchPushFailed", data }], {
      actor: { kind: "runner", id: "session-branch" },
    });
  }
}

const ownerOf = (step: ClaimedStep) => `${step.id}:${step.attempt}`;

/** What a workflow kind's entry runs, with its input parsed. */
type WorkflowExecutor<O> = (step: ClaimedStep, input: StepInput, ctx: StepContext) => Promise<O>;

function agentExecutor(deps: WorkflowExecutorDeps, local: RunnerLocal): WorkflowExecutor<AgentStepOutput> {
  const { store } = deps;
  return async (step, input, ctx) => {
    const config = ZAgentConfig.safeParse(input.agent);
    if (!config.success) {
      throw new StepExecutionError(
        "internal_error",
        `no valid agent configured for role ${input.role}: ${config.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
        false,
      );
    }
    // Checked again here: the runner hands them to a CLI, whatever the log holds.
    const mcpServers = ZMcpServers.safeParse(input.mcpServers ?? []);
    if (!mcpServers.success) {
      throw new StepExecutionError(
        "internal_error",
        `the task's MCP servers are not valid: ${mcpServers.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
        false,
      );
    }
    // Independent of each other: the access rules' reads beside the workspace's git work.
    // Awaited in this order (and both settled), so a refusal fails the step as it did before
    // the two ran together, and no git process of this attempt outlives it.
    const [accessRead, workspaceMade] = await Promise.allSettled([
      checkedAgentAccess(deps.pool, step.sessionId, config.data),
      prepareWorkspace(deps, local, step, input),
    ]);
    if (accessRead.status === "rejected") throw accessRead.reason;
    const access = accessRead.value;
    const agent = createAgent(config.data);
    if (workspaceMade.status === "rejected") throw workspaceMade.reason;
    const workspace = workspaceMade.value;
    // Stable part first, then what changes from call to call (docs/scaling.md, "Prompt economics").
    const stableChars = Math.min(input.promptStableChars ?? 0, input.prompt.length);
    let stable = input.prompt.slice(0, stableChars);
    let changing = input.prompt.slice(stableChars);
    // What stays for the rest of the session goes where the next calls repeat it: right after the
    // thread's message of the step that made it (a staged step's artifacts, the diff under review).
    const shownAfter = new Map<number, string>();
    const showAfter = (index: number, text: string) =>
      shownAfter.set(index, shownAfter.has(index) ? `${shownAfter.get(index)}\n\n${text}` : text);
    // A staged step's artifacts: those written before the thread's window before the thread.
    if (input.forge) {
      const forge = await prepareForgeStep(deps.pool, workspace, input.forge, { inThread: agent.readsThread });
      stable += forge.attached;
      for (const [index, text] of forge.afterMessage) showAfter(index, text);
    }
    // An agent without hands writes by its reply: it is told how, and the runner writes for it.
    const builds = writesFiles(input);
    const writesByReply = builds && agent.fileWrites === "reply";
    if (writesByReply) changing += (await worktreeView(workspace, input, input.workspace.baseCommit)) + filesReplyInstruction(input);
    if (input.diff) {
      // The whole change since the task began, not only the last round's commit; a staged step's
      // artifacts are in the prompt already (prepareForgeStep), so the diff shows the rest.
      const diff = await diffSince(workspace, input.workspace.baseCommit, input.forge ? [FORGE_DIR] : []);
      const shown = `The change under review (git diff):\n${diff.length > MAX_DIFF_IN_PROMPT ? `${diff.slice(0, MAX_DIFF_IN_PROMPT)}\n[diff truncated]` : diff}`;
      const at = input.diffAfterMessage;
      if (agent.readsThread && at !== undefined && at < input.context.length) showAfter(at, shown);
      else changing += `\n\n${shown}`;
    }
    const context = input.context.map((m, i) => (shownAfter.has(i) ? { ...m, text: `${m.text}\n\n${shownAfter.get(i)}` } : m));
    const prompt = stable + changing;
    let text: string;
    let redactions: number;
    let usage: AgentStepOutput["usage"];
    let sandboxed: boolean | undefined;
    let tools: AgentResponse["tools"];
    let egressRefused: AgentResponse["egressRefused"];
    const streamer = new OutputStreamer(
      store,
      { sessionId: step.sessionId, stepId: step.id, attempt: step.attempt, role: input.role },
      { kind: "agent", id: agent.id },
    );
    const held = { id: step.id, attempt: step.attempt, sessionId: step.sessionId };
    const asAgent = { actor: { kind: "agent" as const, id: agent.id } };
    // An agent CLI's own retries, recorded in order as they are reported (awaited below).
    let retriesRecorded: Promise<unknown> = Promise.resolve();
    try {
      const request: AgentRequest = {
        onChunk: streamer.push,
        onProviderRetry: (notice) => {
          const data = { stepId: step.id, attempt: step.attempt, agent: agent.id, ...notice };
          retriesRecorded = retriesRecorded
            .then(() => appendWhileHeld(store, held, [{ type: "ProviderRetried", data }], asAgent))
            // Like streamed output, a view of progress: failing to record it must not fail the step.
            .catch((err: unknown) => logger.warn({ err: String(err), stepId: step.id }, "could not record a provider retry"));
        },
        role: input.role,
        prompt,
        promptStableChars: stable.length,
        context,
        workspace,
        invocation: input.invocation + step.attempt - 1,
        output: input.output,
        allowlist: input.allowlist,
        ...(mcpServers.data.length ? { mcpServers: mcpServers.data } : {}),
        egress: { hosts: access.hosts },
        ...(input.forge
          ? { stage: { name: input.forge.stage, iteration: input.forge.iteration, ...(input.forge.modifying ? { modifying: true } : {}) } }
          : {}),
        signal: ctx.signal,
        deadline: Date.now() + step.timeoutMs,
        privateHosts: access.privateHosts,
        // HTTP brains wait here for their turn under the shared rate limit; each wait is an event.
        callGate: databaseCallGate(deps.pool, {
          onWait: async ({ brain, waitedMs }) => {
            const data = {
              stepId: step.id,
              attempt: step.attempt,
              brain: brain.brainId,
              minIntervalMs: brain.minIntervalMs,
              waitMs: waitedMs,
            };
            await appendWhileHeld(store, held, [{ type: "RateLimitWaited", data }], asAgent);
          },
        }),
      };
      deps.observeAgentRequest?.(step.sessionId, request);
      const response = await invokeAgent(agent, config.data, request);
      // Whatever the agent could read, the server's secrets never reach the record.
      ({ text, redactions } = recordableOutput(response.text));
      usage = usageOf(response, config.data);
      sandboxed = response.sandboxed;
      tools = response.tools;
      egressRefused = response.egressRefused;
    } catch (err) {
      if (err instanceof AgentError) throw new StepExecutionError(err.errorClass, err.message, err.retryable, err.retryAfterMs);
      throw err;
    } finally {
      // Everything streamed (and every retry) is recorded before the step's result.
      await streamer.flush();
      await retriesRecorded;
    }
    // Written from the reply as recorded: the server's secrets are redacted from the files too.
    const replied = writesByReply ? await writeFilesReply(workspace, agent.id, text) : null;
    const raw = await putBlob(deps.pool, text);
    const output: AgentStepOutput = {
      kind: "agent",
      agentId: agent.id,
      raw,
      preview: text.slice(0, PREVIEW_CHARS),
      simulated: agent.simulated,
      ...(usage ? { usage } : {}),
      ...(redactions ? { redactions } : {}),
      ...(sandboxed !== undefined ? { sandboxed } : {}),
      ...(tools ? { tools: { calls: tools.calls, failed: tools.failed } } : {}),
      ...(egressRefused?.length ? { egressRefused } : {}),
    };
    // A staged step's rules hold whatever the agent did: writes outside the stage undone,
    // a person's edits kept, artifacts collected; then its changes are committed like a build.
    if (input.forge) output.forge = await finishForgeStep(deps.pool, workspace, input.forge);
    if (builds || input.forge) {
      const headline = replied ? (replied.summary ?? "") : text;
      const committed = await commitWorkspace({
        path: workspace,
        message: `${input.role} (${input.state}): ${headline.split("\n")[0]?.slice(0, 72) || "changes"}`,
        author: { name: `${agent.id} (${input.role})`, email: `${agent.id}@agents.catcafe.local` },
        expect: { head: input.workspace.head, owner: ownerOf(step) },
        ...(input.workspace.branchPrefix !== undefined ? { branch: `${input.workspace.branchPrefix}${step.sessionId}` } : {}),
      }).catch((err: unknown) => {
        // Another attempt took the workspace over (or it moved under us): nothing was committed.
        if (isAppError(err, "CONFLICT")) throw new StepExecutionError("internal_error", err.message, true);
        throw err;
      });
      // A build whose every tool call failed and that changed nothing did not build (a sandbox
      // that refuses every command looks like this): a tool error, not a completed build.
      if (builds && committed.empty && tools && tools.calls > 0 && tools.failed === tools.calls) {
        throw new StepExecutionError(
          "tool_error",
          `all ${tools.calls} tool call${tools.calls === 1 ? "" : "s"} of ${agent.id} failed and nothing changed; the last: ${tools.lastError ?? "no detail"}`,
          false,
        );
      }
      const diff = await putBlob(deps.pool, committed.diff, "text/x-diff; charset=utf-8");
      // Only what this build added: since the commit it started from (docs/scaling.md#bundles).
      const bundleSince = input.workspace.head;
      const packed = await bundleSession(workspace, bundleSince, committed.commit);
      const bundle = packed ? await putBlob(deps.pool, packed, "application/x-git-bundle") : undefined;
      await pushToRemote(deps, step, input, committed.commit);
      output.commit = {
        commit: committed.commit,
        parent: committed.parent,
        empty: committed.empty,
        changedFiles: committed.changedFiles.map((f) => ({
          path: f.path,
          status: f.status,
          ...("previousPath" in f ? { previousPath: f.previousPath } : {}),
        })),
        diff,
        ...(bundle ? { bundle, bundleSince } : {}),
      };
    }
    // Every process of the step has ended: the next step of the session finds the worktree clean.
    await local.worktrees.leave(workspace, output.commit?.commit ?? input.workspace.head, ownerOf(step));
    return output;
  };
}

/**
 * Why a command that did not end as expected failed: timed out, cancelled, killed, or not
 * started as the classifier says; an exit code other than the expected one with both codes
 * named (0 among them, which the classifier alone takes for a success).
 */
function commandFailure(outcome: CommandRun, expectedExitCode: number): CommandFailure {
  const classified = classifyCommandOutcome(outcome);
  if (classified && !(classified.errorClass === "command_failed" && outcome.exitCode !== null)) return classified;
  return { errorClass: "command_failed", reason: `exited with code ${outcome.exitCode}, expected ${expectedExitCode}` };
}

function commandsExecutor(deps: WorkflowExecutorDeps, local: RunnerLocal): WorkflowExecutor<CommandsStepOutput> {
  return async (step, input, ctx) => {
    const workspace = await prepareWorkspace(deps, local, step, input);
    const results: CommandResultOutput[] = [];
    for (const command of input.commands) {
      const outcome = await runCommand({
        argv: command.argv,
        cwd: workspace,
        allowlist: input.allowlist,
        signal: ctx.signal,
        ...(input.commandTimeoutMs ? { timeoutMs: input.commandTimeoutMs } : {}),
      });
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const expectedExitCode = command.expect.exitCode;
      if (outcome.status === "refused") {
        results.push({
          argv: command.argv,
          status: "refused",
          exitCode: null,
          expectedExitCode,
          durationMs: 0,
          stdoutTail: "",
          stderrTail: "",
          errorClass: "command_refused",
          reason: outcome.reason,
        });
        continue;
      }
      const failure =
        outcome.exitCode === expectedExitCode && !outcome.timedOut && !outcome.signal ? null : commandFailure(outcome, expectedExitCode);
      const stdout = recordableOutput(outcome.stdoutTail.slice(-TAIL_CHARS));
      const stderr = recordableOutput(outcome.stderrTail.slice(-TAIL_CHARS));
      const redactions = stdout.redactions + stderr.redactions;
      results.push({
        argv: command.argv,
        status: "ran",
        exitCode: outcome.exitCode,
        expectedExitCode,
        durationMs: Math.round(outcome.durationMs),
        stdoutTail: stdout.text,
        stderrTail: stderr.text,
        ...(redactions ? { redactions } : {}),
        sandboxed: outcome.sandboxed,
        errorClass: failure?.errorClass ?? null,
        reason: failure?.reason ?? null,
      });
    }
    // Every command has ended: the next step of the session finds the worktree clean.
    await local.worktrees.leave(workspace, input.workspace.head, ownerOf(step));
    return { kind: "commands", results };
  };
}

export interface WorkflowStepKindDeps extends WorkflowExecutorDeps {
  /** The engine's reaction to an outcome, as the application composes it (server/task-engine.ts). */
  reactor: WorkflowReactor;
  /**
   * Called in the reaction's transaction when the workflow has just ended its session
   * (SessionFinalized): the application delivers an approved session there (app-runner.ts).
   */
  onSessionFinalized?: (tx: Tx, store: EventStore, sessionId: string) => Promise<void>;
  /**
   * Called in the reaction's transaction when the session has just come to wait for a person:
   * the application confirms there a task its intake rule confirms itself (app-runner.ts).
   */
  onSessionWaiting?: (tx: Tx, store: EventStore, sessionId: string) => Promise<void>;
}

/** Whether `e` is the session coming to wait for a person (SessionStateChanged with waitsFor). */
function waitsForPerson(e: NewEvent): boolean {
  return e.type === "SessionStateChanged" && (e.data as { waitsFor?: string }).waitsFor === "person";
}

/** An input that is not a workflow step's: the engine validated it when scheduling, so this is a defect. */
const INVALID_WORKFLOW_INPUT: InvalidInput = {
  errorClass: "internal_error",
  message: (step, issues) => `step ${step.id} (${step.kind}) has no valid workflow step input: ${issues}`,
};

/**
 * The workflow's step kinds (`agent`, `commands`): each outcome is decided on by the session's
 * workflow (the reactor, ../workflow/reactor.ts) in the transaction that records it; when that
 * fails, the session ends as if the step had given up.
 */
export function workflowStepKinds(deps: WorkflowStepKindDeps): StepKind[] {
  const reaction = {
    async react(tx: Tx, { store, sessionId, outcome }: StepReaction<StepInput, StepOutput>): Promise<void> {
      // The workflow's reactor finds the outcome among the events recorded with it: here, the outcome alone.
      const appended = await deps.reactor.reactToStepOutcome(tx, store, sessionId, [outcome]);
      if (appended.some((e) => e.type === "SessionFinalized")) await deps.onSessionFinalized?.(tx, store, sessionId);
      else if (appended.some(waitsForPerson)) await deps.onSessionWaiting?.(tx, store, sessionId);
    },
    async onReactFailure(tx: Tx, { store, sessionId, outcome }: ReactionFailure<StepInput>, message: string): Promise<void> {
      await deps.reactor.reactToReactionFailure(tx, store, sessionId, [outcome], message);
    },
    invalidInput: INVALID_WORKFLOW_INPUT,
  };
  // One per runner process: what it learned about its clones and left clean serves all its steps.
  const local: RunnerLocal = { clones: new KnownClones(), worktrees: new CleanWorktrees() };
  return [
    defineStepKind({ kind: "agent", input: ZStepInput, output: ZAgentStepOutput, execute: agentExecutor(deps, local), ...reaction }),
    defineStepKind({
      kind: "commands",
      input: ZStepInput,
      output: ZCommandsStepOutput,
      execute: commandsExecutor(deps, local),
      ...reaction,
    }),
  ];
}
