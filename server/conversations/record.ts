// A conversation as its stream records it, and how a decision is recorded: the decider's
// events, each agent call with the step the runners claim (same id: a call is a step), each
// mode deadline with a timer step due when it passes, and a termination with the cancel of
// every call no runner has claimed yet (a claimed one runs out; its reply is then discarded).
import crypto from "node:crypto";
import type { Db, Queryable } from "../db/pool";
import { AppError } from "../errors";
import type { AppEvent } from "../events/catalog";
import { commandHandler, foldedState, type Decision } from "../events/command-handler";
import { LATEST_VERSION } from "../events/fold-read";
import { timeOrderedId } from "../events/ids";
import type { EventStore } from "../events/store";
import type { NewEvent } from "../events/types";
import { decideConversation, evolveConversation, type ConversationCommand, type ConversationEvent } from "../modes/conversation";
import { callOutput, conversationFold, type ConversationRecord } from "./fold";
import { ZConversationCallInput, type ConversationCallInput } from "./steps";

export interface ConversationDeps {
  store: EventStore;
  pool: Db;
}

export const CONVERSATION_WORKFLOW = "conversation";
export const CALL_STEP = "conversation_call";
export const TIMER_STEP = "conversation_timer";

/** Whether the session is a conversation (the sessions projection knows). */
export async function isConversation(db: Queryable, sessionId: string): Promise<boolean> {
  const r = await db.query<{ workflow: string }>("SELECT workflow FROM sessions WHERE id = $1", [sessionId]);
  return r.rows[0]?.workflow === CONVERSATION_WORKFLOW;
}

/** The session's title as the sessions projection holds it (null: no such session). */
export async function sessionTitle(db: Queryable, sessionId: string): Promise<string | null> {
  const r = await db.query<{ title: string }>("SELECT title FROM sessions WHERE id = $1", [sessionId]);
  return r.rows[0]?.title ?? null;
}

export interface LoadedConversation extends ConversationRecord {
  id: string;
}

/** Decisions on conversations: one at a time under the stream's lock, on the state folded from the nearest snapshot. */
export const conversationCommands = commandHandler(
  foldedState(conversationFold, (record) => ({
    status: record.state.status,
    mode: record.state.mode,
    inFlight: Object.keys(record.state.inFlight).length,
  })),
);

/** The conversation as it is now, from the nearest snapshot; NOT_FOUND when the session is no conversation. */
export async function loadConversation(store: EventStore, id: string): Promise<LoadedConversation> {
  const record = await store.stateAt(id, LATEST_VERSION, conversationFold);
  if (record.state.status === "none") throw new AppError("NOT_FOUND", `session ${id} is not a conversation`);
  return { id, ...record };
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
        ...(event.data.promptStableChars ? { promptStableChars: event.data.promptStableChars } : {}),
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

/** What a conversation is asked: a command, or one made from the conversation as it is (read under its lock). */
export type ConversationRequest = ConversationCommand | ((loaded: LoadedConversation, db: Queryable) => Promise<ConversationCommand>);

/**
 * The decision on a conversation, for the command handler (`conversationCommands`): the
 * conversation decider's events, recorded with their steps, timers and cancels (`recordable`).
 * The handler holds the stream's lock from the read to the commit: people's posts, switches and
 * ends, and the runners' claims and replies (whose appends wait on that lock) are taken one at
 * a time, so no request is refused for having raced another.
 */
export function conversationDecision(request: ConversationRequest): Decision<ConversationRecord> {
  return async (record, at) => {
    if (record.state.status === "none") throw new AppError("NOT_FOUND", `session ${at.streamId} is not a conversation`);
    const loaded: LoadedConversation = { id: at.streamId, ...record };
    const command = typeof request === "function" ? await request(loaded, at.db) : request;
    const decided = decideConversation(record.state, command, conversationContext);
    return decided.length ? recordable(at.db, loaded, decided, new Date()) : [];
  };
}
