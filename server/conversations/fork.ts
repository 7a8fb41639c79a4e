// A conversation forked at any event (req E5 for conversations), through the fork service
// (events/forks.ts): the child inherits events 1..N (nothing copied) and goes on from the
// conversation as it was there. The calls in flight at N belong to the parent's runners and
// steps, so the child makes them again (`reissues` names the parent's call) and sets a pending
// deadline again; the parent never changes. A fork at or after the end is an ended copy. A fork
// sits between decisions: the events of one decision are appended together (one transaction),
// and a position inside them is refused with the two positions around it.
import crypto from "node:crypto";
import { z } from "zod";
import { AppError } from "../errors";
import type { Actor } from "../events/catalog";
import { forkStream, type Forked } from "../events/forks";
import { decideConversation } from "../modes/conversation";
import { ZEventVersion } from "../events/versions";
import { conversationFold } from "./fold";
import { conversationContext, CONVERSATION_WORKFLOW, recordable, type ConversationDeps } from "./record";

export const ZForkConversationInput = z.object({
  sessionId: z.string().min(1).max(100),
  atVersion: ZEventVersion,
  note: z.string().trim().min(1).max(2000).optional(),
});

/** Where a conversation's fork may start: not inside one decision (events recorded in one transaction). */
async function betweenDecisions(deps: ConversationDeps, sessionId: string, atVersion: number): Promise<void> {
  const [at, next] = await deps.store.readStream(sessionId, { fromVersion: atVersion, toVersion: atVersion + 1 });
  if (!at || !next || next.txId !== at.txId) return;
  // One transaction appends to one stream: the decision's events are that stream's with its transaction id.
  const decision = await deps.pool.query<{ first: number; end: number }>(
    "SELECT min(version) AS first, max(version) AS end FROM events WHERE stream_id = $1 AND tx_id = $2",
    [at.streamId, at.txId],
  );
  const { first, end } = decision.rows[0]!;
  const where = first > 1 ? `${first - 1} or ${end}` : `${end}`;
  throw new AppError(
    "INVALID_INPUT",
    `event ${atVersion} is inside one decision (events ${first}..${end} were recorded together): fork at ${where}`,
    { fieldErrors: { atVersion: [`at ${where}`] } },
  );
}

export async function forkConversation(deps: ConversationDeps, raw: z.input<typeof ZForkConversationInput>, actor: Actor): Promise<Forked> {
  const input = ZForkConversationInput.parse(raw);
  const childId = `c-${crypto.randomBytes(6).toString("hex")}`;
  const title = async () => {
    const [created] = await deps.store.readStream(input.sessionId, { toVersion: 1 });
    return created?.type === "SessionCreated" ? (created.data as { title?: string }).title : undefined;
  };
  const parentTitle = (await title()) ?? input.sessionId;
  return forkStream(
    deps.store,
    {
      fold: conversationFold,
      parentId: input.sessionId,
      atVersion: input.atVersion,
      childId,
      async startsFrom(record, { atVersion }) {
        await betweenDecisions(deps, input.sessionId, atVersion);
        if (!record.setup) throw new AppError("NOT_FOUND", `session ${input.sessionId} is not a conversation`);
        return record;
      },
      forked({ state }) {
        const status = state.status === "terminated" ? "terminated" : state.stalled ? "stalled" : "open";
        return {
          reason: "manual",
          title: `${parentTitle} (fork)`,
          workflow: CONVERSATION_WORKFLOW,
          state: status,
          ...(input.note ? { note: input.note } : {}),
          ...(status === "terminated" ? { outcome: "terminated" } : {}),
        };
      },
      // The calls in flight at the position (and a pending deadline) are made again by the child.
      continuation: (record, _from, at) =>
        recordable(
          at.db,
          { id: at.childId, ...record },
          decideConversation(record.state, { type: "Reissue" }, conversationContext),
          new Date(),
        ),
    },
    { actor },
  );
}
