// A fork at an event, whatever the session: a conversation goes on from the conversation as
// it was there (server/conversations/fork.ts), a task or pipeline from its workflow's state
// (server/tasks/fork.ts). One entry for sessions.fork and POST /api/sessions/:id/fork.
import type { z } from "zod";
import { forkConversation } from "../conversations/fork";
import { isConversation } from "../conversations/record";
import type { Actor } from "../events/catalog";
import { forkSession, type ZForkInput } from "../tasks/fork";
import type { TaskDeps } from "../tasks/commands";

export async function forkAnySession(deps: TaskDeps, input: z.output<typeof ZForkInput>, actor: Actor) {
  if (!(await isConversation(deps.pool, input.sessionId))) return forkSession(deps, input, actor);
  return forkConversation(
    deps,
    { sessionId: input.sessionId, atVersion: input.atVersion, ...(input.note ? { note: input.note } : {}) },
    actor,
  );
}
