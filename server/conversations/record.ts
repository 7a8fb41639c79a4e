// A conversation as its stream records it, and how a decision is recorded: the decider's
// events, each agent call with the step the runners claim (same id: a call is a step), each
// mode deadline with a timer step due when it passes, and a termination with the cancel of
// every call no runner has claimed yet (a claimed one runs out; its reply is then discarded).
import crypto from "node:crypto";
import { withTransaction, type Db, type Queryable, type Tx } from "../db/pool";
import { AppError } from "../errors";
import type { Actor, AppEvent, AppEventOf } from "../events/catalog";
import { CONVERSATION_EVENT_TYPES } from "../events/conversation-catalog";
import { timeOrderedId } from "../events/ids";
import type { EventStore } from "../events/store";
import type { NewEvent, RecordedEvent } from "../events/types";
import type { ThreadMessage } from "../agent-calls";
import {
  decideConversation,
  evolveConversation,
  initialConversation,
  type ConversationCommand,
  type ConversationEvent,
  type ConversationState,
} from "../modes/conversation";
import { ZConversationCallInput, type ConversationCallInput, type CallOutput } from "./steps";

export interface ConversationDeps {
  store: EventStore;
  pool: Db;
}

export const CONVERSATION_WORKFLOW = "conversation";
export const CALL_STEP = "conversation_call";
export const TIMER_STEP = "conversation_timer";
/** Messages of the conversation an agent is shown with its call (the last ones). */
const CONTEXT_MESSAGES = 20;

type Setup = AppEventOf<"ConversationSetup">["data"];

export interface LoadedConversation {
  id: string;
  version: number;
  state: ConversationState;
  setup: Setup | null;
  /** The thread so far, as agents are shown it. */
  thread: ThreadMessage[];
  /** Calls made so far per agent and output: a scripted agent answers its n-th call of a kind with entry n. */
  invocations: Record<string, number>;
  /** When the conversation last changed (its last event). */
  lastAt: string | null;
}

const CONVERSATION_TYPES: ReadonlySet<string> = new Set(CONVERSATION_EVENT_TYPES);

/** Whether the session is a conversation (the sessions projection knows). */
export async function isConversation(db: Queryable, sessionId: string): Promise<boolean> {
  const r = await db.query<{ workflow: string }>("SELECT workflow FROM sessions WHERE id = $1", [sessionId]);
  return r.rows[0]?.workflow === CONVERSATION_WORKFLOW;
}

export function isConversationEvent(event: { type: string }): event is ConversationEvent {
  return CONVERSATION_TYPES.has(event.type);
}

/** What a call asks its agent for, by the mode that made it: the scripted brain answers by it. */
export function callOutput(mode: string): CallOutput {
  return mode === "voting" ? "ballot" : mode === "sop" ? "sop" : "reply";
}

export function foldRecorded(id: string, events: readonly RecordedEvent[]): LoadedConversation {
  const loaded: LoadedConversation = { id, version: 0, state: initialConversation, setup: null, thread: [], invocations: {}, lastAt: null };
  for (const event of events as (RecordedEvent & AppEvent)[]) {
    loaded.version = event.version;
    loaded.lastAt = event.recordedAt;
    if (event.type === "ConversationSetup") loaded.setup = event.data;
    if (!isConversationEvent(event)) continue;
    if (event.type === "AgentCallScheduled") {
      const key = `${event.data.agent}:${callOutput(loaded.state.mode)}`;
      loaded.invocations[key] = (loaded.invocations[key] ?? 0) + 1;
    }
    const said = threadLine(event);
    if (said) loaded.thread.push(said);
    loaded.state = evolveConversation(loaded.state, event);
  }
  if (loaded.thread.length > CONTEXT_MESSAGES) loaded.thread = loaded.thread.slice(-CONTEXT_MESSAGES);
  return loaded;
}

function threadLine(event: ConversationEvent): ThreadMessage | null {
  switch (event.type) {
    case "MessagePosted":
      return { from: "operator", text: event.data.text };
    case "AgentReplied":
      return { from: "system", text: `@${event.data.agent}: ${event.data.text}` };
    case "SystemMessage":
      return { from: "system", text: event.data.text };
    default:
      return null;
  }
}

export async function loadConversation(store: EventStore, id: string, db?: Queryable): Promise<LoadedConversation> {
  const loaded = foldRecorded(id, await store.readStream(id, db ? { db } : {}));
  if (loaded.state.status === "none") throw new AppError("NOT_FOUND", `session ${id} is not a conversation`);
  return loaded;
}

/** The app events that record `decided`: with the calls' steps, the deadlines' timers and the cancels. */
export async function recordable(db: Queryable, loaded: LoadedConversation, decided: ConversationEvent[], now: Date): Promise<NewEvent[]> {
  const out: NewEvent[] = [];
  let state = loaded.state;
  const invocations = { ...loaded.invocations };
  for (const event of decided) {
    // The decider's events are the catalog's (checked here at compile time, at append by zod).
    const recorded: Pick<AppEvent, "type" | "data"> = event;
    out.push(recorded);
    if (event.type === "AgentCallScheduled") {
      if (!loaded.setup) throw new AppError("INTERNAL", `conversation ${loaded.id} has no setup to call agents with`);
      const runtime = loaded.setup.runtimes[event.data.agent];
      if (!runtime) throw new AppError("INTERNAL", `conversation ${loaded.id} has no runtime for agent ${event.data.agent}`);
      const output = callOutput(state.mode);
      const key = `${event.data.agent}:${output}`;
      const input: ConversationCallInput = {
        callId: event.data.callId,
        agentId: event.data.agent,
        role: runtime.role,
        agent: runtime.config,
        prompt: event.data.prompt,
        // A voter answers alone: it is shown the question, not the thread (nor the others' ballots).
        context: output === "ballot" ? [] : loaded.thread,
        invocation: invocations[key] ?? 0,
        output,
        workspace: { repoPath: loaded.setup.project.repoPath, head: loaded.setup.project.baseCommit },
      };
      invocations[key] = (invocations[key] ?? 0) + 1;
      out.push({
        type: "StepScheduled",
        data: {
          stepId: event.data.callId,
          kind: CALL_STEP,
          input: ZConversationCallInput.parse(input),
          timeoutMs: loaded.setup.limits.stepTimeoutMs,
          maxAttempts: loaded.setup.limits.maxAttempts,
        },
      });
    }
    if (event.type === "ModeDeadlineSet") {
      out.push({
        type: "StepScheduled",
        data: {
          stepId: timeOrderedId(),
          kind: TIMER_STEP,
          input: { token: event.data.token },
          timeoutMs: 30_000,
          maxAttempts: 3,
          availableAt: new Date(now.getTime() + event.data.afterMs).toISOString(),
        },
      });
    }
    if (event.type === "ConversationTerminated") {
      for (const stepId of event.data.cancelled) out.push({ type: "StepCancelled", data: { stepId } });
      const timers = await db.query<{ id: string }>(
        "SELECT id FROM steps WHERE session_id = $1 AND state = 'pending' AND kind = $2 ORDER BY id",
        [loaded.id, TIMER_STEP],
      );
      for (const { id } of timers.rows) out.push({ type: "StepCancelled", data: { stepId: id } });
    }
    state = evolveConversation(state, event);
  }
  return out;
}

export const conversationContext = { newId: () => crypto.randomUUID() };

/**
 * The conversation's calls no runner has claimed yet, read under the stream's lock: a claim
 * appends to the conversation's stream, so none can come between this read and the append.
 */
export async function unclaimedCalls(db: Queryable, id: string): Promise<string[]> {
  const pending = await db.query<{ id: string }>("SELECT id FROM steps WHERE session_id = $1 AND state = 'pending' AND kind = $2", [
    id,
    CALL_STEP,
  ]);
  return pending.rows.map((r) => r.id).sort();
}

/**
 * Decides `command` on the conversation as it is and appends what was decided, holding the
 * stream's row lock from the read to the commit: people's posts, switches and ends, and the
 * runners' claims and replies (whose appends wait on that lock) are taken one at a time, so
 * no request is refused for having raced another. The lock is the transaction's first write,
 * as every append's is (docs/architecture.md).
 */
export async function actOnConversation(
  deps: ConversationDeps,
  id: string,
  actor: Actor,
  command: ConversationCommand | ((loaded: LoadedConversation, tx: Tx) => Promise<ConversationCommand>),
): Promise<{ version: number; events: ConversationEvent[]; loaded: LoadedConversation }> {
  return withTransaction(deps.pool, async (tx) => {
    const locked = await tx.query("SELECT version FROM streams WHERE id = $1 FOR UPDATE", [id]);
    if (!locked.rowCount) throw new AppError("NOT_FOUND", `session ${id} is not a conversation`);
    const loaded = await loadConversation(deps.store, id, tx);
    const decided = decideConversation(
      loaded.state,
      typeof command === "function" ? await command(loaded, tx) : command,
      conversationContext,
    );
    if (!decided.length) return { version: loaded.version, events: decided, loaded };
    const result = await deps.store.appendInTx(tx, id, loaded.version, await recordable(tx, loaded, decided, new Date()), { actor });
    return { version: result.version, events: decided, loaded };
  });
}

/** The same inside the runner's result transaction (the stream is locked by the outcome just appended). */
export async function actOnConversationInTx(
  tx: Tx,
  store: EventStore,
  id: string,
  command: ConversationCommand,
  metadata: { actor: Actor; correlationId?: string; causationId?: string },
): Promise<void> {
  const loaded = await loadConversation(store, id, tx);
  const decided = decideConversation(loaded.state, command, conversationContext);
  if (!decided.length) return;
  await store.appendInTx(tx, id, loaded.version, await recordable(tx, loaded, decided, new Date()), metadata);
}
