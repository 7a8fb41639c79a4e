// The events of a bake-off (docs/bake-off.md): one confirmed task forked into up to six
// contenders, each the same task with another coder (or model), run through the same gates; an
// optional judge's advice; a person's pick, which delivers the winner and ends the others. The
// parent session records the bake-off (BakeOffForked, BakeOffJudged, BakeOffWinnerChosen), each
// contender its part in it (BakeOffContender first, BakeOffNotChosen when another won).
import { z } from "zod";
import { ZErrorClass } from "../errors";
import { defineEvent } from "./registry";
import { ZAgentSnapshot } from "./step-contract";

/** c1 … c6, in the order the contenders were given. */
export const ZContenderId = z.string().regex(/^c[1-6]$/, "a contender id: c1 to c6");
export const MAX_CONTENDERS = 6;

/** A contender as a person names it (tasks.start's `bakeOff`, an intake rule's): bound to an agent at the start (server/tasks/bake-off-contenders.ts). */
export const ZBakeOffContenderInput = z.object({
  coder: z.string().trim().min(1, "name the contender's coder (an agent of the project)").max(100),
  model: z.string().trim().min(1).max(200).optional(),
  label: z.string().trim().min(1).max(200).optional(),
});
export const ZBakeOffStart = z.object({
  contenders: z
    .array(ZBakeOffContenderInput)
    .min(2, "a bake-off has 2 to 6 contenders")
    .max(MAX_CONTENDERS, "a bake-off has 2 to 6 contenders"),
});
export type TBakeOffStart = z.input<typeof ZBakeOffStart>;

/** A contender as the task started (TaskStarted.bakeOff): who codes, and the agent bound for it then. */
export const ZBakeOffContenderSpec = z.object({
  id: ZContenderId,
  /** The agent's name, as given (an agent of `.catcafe/agents.json`, or of the project record). */
  coder: z.string().min(1).max(100),
  model: z.string().min(1).max(200).optional(),
  label: z.string().min(1).max(200),
  /** The coder's configuration as bound when the task started (secrets by variable name only). */
  agent: ZAgentSnapshot,
});
export type BakeOffContenderSpec = z.infer<typeof ZBakeOffContenderSpec>;

export const ZBakeOffConfig = z.object({ contenders: z.array(ZBakeOffContenderSpec).min(2).max(MAX_CONTENDERS) });

/** The judge's advice, as the reply must be (strict JSON); the contender ids are checked against the bake-off's. */
export const ZJudgeRecommendation = z
  .object({
    winner: ZContenderId,
    ranking: z.array(ZContenderId).min(1).max(MAX_CONTENDERS),
    reasons: z.array(z.string().min(1).max(2000)).min(1).max(20),
  })
  .strict();
export type JudgeRecommendation = z.infer<typeof ZJudgeRecommendation>;

const ZStepId = z.uuid();

export const bakeOffCatalog = {
  /** At the confirm, in its transaction: the contenders' sessions, forked at the position the confirm was given. */
  BakeOffForked: defineEvent({
    version: 1,
    schema: z.object({
      contenders: z
        .array(
          z.object({
            id: ZContenderId,
            sessionId: z.string().min(1),
            coder: z.string().min(1),
            model: z.string().optional(),
            label: z.string().min(1),
          }),
        )
        .min(2)
        .max(MAX_CONTENDERS),
    }),
    summary: (d) => `Bake-off: ${d.contenders.map((c) => `${c.id} ${c.label} (${c.sessionId})`).join(", ")}`,
  }),
  /** A contender's first event after SessionForked: whose bake-off, which contender, and the coder it runs with. */
  BakeOffContender: defineEvent({
    version: 1,
    schema: z.object({
      parentSessionId: z.string().min(1),
      contenderId: ZContenderId,
      coder: z.string().min(1),
      model: z.string().optional(),
      label: z.string().min(1),
      agent: ZAgentSnapshot,
    }),
    summary: (d) => `Contender ${d.contenderId} of the bake-off ${d.parentSessionId}: ${d.label}`,
  }),
  /** A person asked the judge (its step is scheduled with it). */
  BakeOffJudgeRequested: defineEvent({
    version: 1,
    schema: z.object({ stepId: ZStepId, agentId: z.string().min(1), attempt: z.number().int().positive() }),
    summary: (d) => `The judge ${d.agentId} was asked (try ${d.attempt})`,
  }),
  /** The judge's advice: advisory only, a person picks. */
  BakeOffJudged: defineEvent({
    version: 1,
    schema: z.object({ stepId: ZStepId, recommendation: ZJudgeRecommendation, agent: z.string().min(1) }),
    summary: (d) => `The judge ${d.agent} recommends ${d.recommendation.winner} (ranking ${d.recommendation.ranking.join(" > ")})`,
  }),
  /** The judge's reply was not the strict JSON asked for (schema_invalid), or its step failed; `retried`: asked again. */
  BakeOffJudgeFailed: defineEvent({
    version: 1,
    schema: z.object({ stepId: ZStepId, errorClass: ZErrorClass, message: z.string(), retried: z.boolean() }),
    summary: (d) => `The judge failed (${d.errorClass}): ${d.message}${d.retried ? " — asked again" : ""}`,
  }),
  /** A person's pick; who is the event's actor. The winner is delivered by the project's delivery settings. */
  BakeOffWinnerChosen: defineEvent({
    version: 1,
    schema: z.object({ contenderId: ZContenderId, sessionId: z.string().min(1), reason: z.string().max(2000).nullable() }),
    summary: (d) => `Winner chosen: ${d.contenderId} (${d.sessionId})${d.reason ? `: ${d.reason}` : ""}`,
  }),
  /** A person ended the bake-off with no winner (dismissed); the contenders still running are stopped. */
  BakeOffDismissed: defineEvent({
    version: 1,
    schema: z.object({ reason: z.string().max(2000).nullable() }),
    summary: (d) => `Bake-off dismissed: no winner${d.reason ? ` (${d.reason})` : ""}`,
  }),
  /** On a contender: another was chosen (or none); it ends `not_chosen`. `endedAs`: its own outcome before, null if it still ran. */
  BakeOffNotChosen: defineEvent({
    version: 1,
    schema: z.object({
      parentSessionId: z.string().min(1),
      contenderId: ZContenderId,
      winner: ZContenderId.nullable(),
      endedAs: z.string().nullable(),
    }),
    summary: (d) => `Not chosen (${d.winner ? `${d.winner} won` : "no winner"}${d.endedAs ? `; it had ended ${d.endedAs}` : "; stopped"})`,
  }),
} as const;
