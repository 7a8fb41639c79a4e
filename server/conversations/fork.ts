// A conversation forked at any event (req E5 for conversations): the child inherits events
// 1..N (nothing copied) and goes on from the conversation as it was there. The calls in
// flight at N belong to the parent's runners and steps, so the child makes them again
// (`reissues` names the parent's call) and sets a pending deadline again; the parent never
// changes. A fork at or after the end is an ended copy. A fork sits between decisions: the
// events of one decision are appended together (one transaction), and a position inside
// them is refused with the two positions around it.
import crypto from "node:crypto";
import { z } from "zod";
import { AppError } from "../errors";
import type { Actor } from "../events/catalog";
import { decideConversation } from "../modes/conversation";
import { conversationContext, CONVERSATION_WORKFLOW, foldRecorded, recordable, type ConversationDeps } from "./record";

export const ZForkConversationInput = z.object({
  sessionId: z.string().min(1).max(100),
  atVersion: z.number().int().min(1),
  note: z.string().trim().min(1).max(2000).optional(),
});

export async function forkConversation(
  deps: ConversationDeps,
  raw: z.input<typeof ZForkConversationInput>,
  actor: Actor,
): Promise<{ sessionId: string; parentId: string; atVersion: number; version: number }> {
  const input = ZForkConversationInput.parse(raw);
  const read = await deps.store.readStream(input.sessionId, { toVersion: input.atVersion + 1 });
  const history = read.filter((e) => e.version <= input.atVersion);
  const at = history.at(-1)?.version ?? 0;
  if (at < input.atVersion) {
    throw new AppError("INVALID_INPUT", `session ${input.sessionId} has ${at} events: there is no event ${input.atVersion} to fork at`, {
      fieldErrors: { atVersion: [`at most ${at}`] },
    });
  }
  // A decision is recorded at once (one transaction): a fork goes between decisions, never inside one.
  const next = read.find((e) => e.version === input.atVersion + 1);
  if (next && next.txId === history.at(-1)!.txId) {
    const together = read.filter((e) => e.txId === next.txId).map((e) => e.version);
    const [first, last] = [Math.min(...together), Math.max(...together)];
    const end = (await deps.store.readStream(input.sessionId, { fromVersion: last })).filter((e) => e.txId === next.txId).at(-1)!.version;
    const where = first > 1 ? `${first - 1} or ${end}` : `${end}`;
    throw new AppError(
      "INVALID_INPUT",
      `event ${input.atVersion} is inside one decision (events ${first}..${end} were recorded together): fork at ${where}`,
      { fieldErrors: { atVersion: [`at ${where}`] } },
    );
  }
  const childId = `c-${crypto.randomBytes(6).toString("hex")}`;
  const inherited = foldRecorded(childId, history);
  if (!inherited.setup) throw new AppError("NOT_FOUND", `session ${input.sessionId} is not a conversation`);
  const title = history.find((e) => e.type === "SessionCreated")?.data as { title?: string } | undefined;
  const { state } = inherited;
  const status = state.status === "terminated" ? "terminated" : state.stalled ? "stalled" : "open";
  const forked = {
    type: "SessionForked",
    data: {
      parentId: input.sessionId,
      atVersion: input.atVersion,
      reason: "manual" as const,
      title: `${title?.title ?? input.sessionId} (fork)`,
      workflow: CONVERSATION_WORKFLOW,
      state: status,
      ...(input.note ? { note: input.note } : {}),
      ...(status === "terminated" ? { outcome: "terminated" } : {}),
    },
  };
  const again = decideConversation(state, { type: "Reissue" }, conversationContext);
  const following = await recordable(deps.pool, { ...inherited, version: input.atVersion + 1 }, again, new Date());
  const result = await deps.store.fork({
    parentId: input.sessionId,
    atVersion: input.atVersion,
    childId,
    event: [forked, ...following],
    metadata: { actor },
  });
  return { sessionId: childId, parentId: input.sessionId, atVersion: input.atVersion, version: result.version };
}
