// A bake-off's confirm (docs/bake-off.md): the roundtable ran once; the person's confirm forks
// the session into its contenders, in the confirm's transaction. Each contender is a fork at
// the position the confirm was given (a task's fork, ./fork.ts, reason `bake_off`) that records
// which contender it is (BakeOffContender: its coder replaces the task's), then takes the
// confirm itself: it builds at once, through the same gates, caps, reviewer and tester. The
// parent records the confirm and the contenders (BakeOffForked) and waits in `bake_off` until a
// person picks a winner or dismisses the bake-off (server/bake-off/pick.ts): while it waits it
// takes no confirm, no cancel and no other workflow command; a message is kept and answered.
import crypto from "node:crypto";
import type { Tx } from "../db/pool";
import { AppError } from "../errors";
import type { BakeOffContenderSpec } from "../events/bake-off-catalog";
import type { Actor } from "../events/catalog";
import type { Decision } from "../events/command-handler";
import type { NewEvent } from "../events/types";
import { decide, decideContext, definitionFor, requireTask, type StartedTask, type TaskCommand, type TaskState } from "../task-engine";
import { hasConfirmSignal } from "../workflow/decide";
import { currentState } from "../workflow/transition";
import type { TaskDeps } from "./session-ref";
import { forkTask } from "./fork";

/** The parent's state while its contenders run and until a person picks (no state of the workflow's own). */
export const BAKE_OFF_STATE = "bake_off";
/** How the parent ends: a winner chosen, or dismissed with none. */
export const BAKE_OFF_OUTCOMES = { chosen: "winner_chosen", dismissed: "bake_off_dismissed" } as const;
/** How a contender ends when another is chosen (or none). */
export { NOT_CHOSEN } from "../../lib/outcomes";

/** A session id for each contender: the parent's, with the contender's id (readable in lists and branches). */
function contenderSessionId(parentId: string, contender: BakeOffContenderSpec): string {
  return `${parentId}-${contender.id}-${crypto.randomBytes(2).toString("hex")}`;
}

/** Whether the command is the person's confirm of a bake-off that has not forked yet (a follow-up saying /confirm is one). */
function confirmOf(
  task: StartedTask,
  command: TaskCommand,
): { via: "button" | "command" | "followup" | "cli" | "api"; text?: string } | null {
  if (!task.config.bakeOff || task.fsm === BAKE_OFF_STATE) return null;
  if (command.type === "Confirm") return { via: command.via };
  if (command.type !== "FollowUp" || !hasConfirmSignal(command.text)) return null;
  const spec = currentState(definitionFor(task), task);
  return spec.type === "wait" && spec.on.confirm ? { via: "followup", text: command.text } : null;
}

/**
 * The decision on a task's command, bake-offs included, in `tx` (which holds the stream's lock):
 * a bake-off's confirm forks its contenders; the parent in `bake_off` answers only a message;
 * any other command is the engine's.
 */
export function bakeOffAwareDecision(deps: TaskDeps, tx: Tx, actor: Actor, command: TaskCommand): Decision<TaskState> {
  return async (state, at) => {
    const task = requireTask(at.streamId, state);
    const ctx = decideContext(definitionFor(task));
    if (task.fsm === BAKE_OFF_STATE) return waitingParent(task, command);
    const confirm = confirmOf(task, command);
    if (!confirm) return decide(task, command, ctx);
    // The engine says whether a confirm is taken here (its refusal, "already moved on", is the answer).
    decide(task, { type: "Confirm", via: confirm.via }, ctx);
    const contenders = task.config.bakeOff!.contenders;
    const forked = [];
    for (const c of contenders) {
      const sessionId = contenderSessionId(at.streamId, c);
      await forkContender(deps, tx, actor, { parentId: at.streamId, atVersion: at.version, sessionId, contender: c, via: confirm.via });
      forked.push({ id: c.id, sessionId, coder: c.coder, ...(c.model ? { model: c.model } : {}), label: c.label });
    }
    const events: NewEvent[] = [
      ...(confirm.text ? [{ type: "OperatorMessagePosted", data: { text: confirm.text } }] : []),
      { type: "OperatorConfirmed", data: { via: confirm.via } },
      { type: "BakeOffForked", data: { contenders: forked } },
      {
        type: "SessionStateChanged",
        data: { from: task.fsm, to: BAKE_OFF_STATE, reason: `bake-off: ${forked.length} contenders build the confirmed proposal` },
      },
    ];
    return events;
  };
}

/** One contender: a fork at the confirm's position, BakeOffContender, then the confirm (its build is scheduled). */
async function forkContender(
  deps: TaskDeps,
  tx: Tx,
  actor: Actor,
  at: {
    parentId: string;
    atVersion: number;
    sessionId: string;
    contender: BakeOffContenderSpec;
    via: "button" | "command" | "followup" | "cli" | "api";
  },
): Promise<void> {
  const { contender } = at;
  await forkTask(
    deps,
    {
      parentId: at.parentId,
      childId: at.sessionId,
      atVersion: at.atVersion,
      reason: "bake_off",
      note: `contender ${contender.id}: ${contender.label}`,
      title: (first) => `${first} (${contender.id}: ${contender.label})`,
      first: async () => [
        {
          type: "BakeOffContender",
          data: {
            parentSessionId: at.parentId,
            contenderId: contender.id,
            coder: contender.coder,
            ...(contender.model ? { model: contender.model } : {}),
            label: contender.label,
            agent: contender.agent,
          },
        },
      ],
      then: (state, ctx) => decide(state, { type: "Confirm", via: at.via }, ctx),
    },
    actor,
    { tx },
  );
}

/** The parent while its bake-off runs: a message is kept and answered; a workflow command is refused, saying what to do. */
function waitingParent(task: StartedTask, command: TaskCommand): NewEvent[] {
  if (command.type === "FollowUp") {
    return [
      { type: "OperatorMessagePosted", data: { text: command.text } },
      {
        type: "SystemReplied",
        data: { text: "This session is a bake-off: its contenders build. Compare them, ask the judge, then pick a winner or dismiss it." },
      },
    ];
  }
  throw new AppError(
    "CONFLICT",
    `this session is a bake-off (in "${task.fsm}"): ${command.type === "Cancel" ? "dismiss it to stop its contenders" : "pick a winner or dismiss it"} (bakeOffs.pick, bakeOffs.dismiss)`,
    { state: task.fsm },
  );
}
