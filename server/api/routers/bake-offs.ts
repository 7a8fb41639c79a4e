// Bake-offs (docs/bake-off.md): started by tasks.start with `bakeOff`, forked at tasks.confirm;
// here operators ask the judge, pick the winner or dismiss, and viewers read the bake-off. Thin:
// the domain functions in server/bake-off do the work and record the actor.
import { judgeBakeOff, ZJudgeInput } from "../../bake-off/judge";
import { dismissBakeOff, pickWinner, ZDismissInput, ZPickInput } from "../../bake-off/pick";
import { getBakeOff } from "../../bake-off/record";
import { ZSessionRef } from "../../tasks/commands";
import { operatorProcedure, router, viewerProcedure } from "../trpc";
import { actorOf } from "./tasks";

export const bakeOffsRouter = router({
  /** The parent's bake-off: its contenders with their sessions and states, the judge's advice, the choice. */
  get: viewerProcedure.input(ZSessionRef).query(({ ctx, input }) => getBakeOff(ctx, input.sessionId)),
  /** Asks the judge (the session's reviewer, or `judge`) for a recommendation once every contender has ended. */
  judge: operatorProcedure.input(ZJudgeInput).mutation(({ ctx, input }) => judgeBakeOff(ctx, input, actorOf(ctx.user))),
  /** Picks the winner: delivered by the project's settings; the others end not_chosen. */
  pick: operatorProcedure.input(ZPickInput).mutation(({ ctx, input }) => pickWinner(ctx, input, actorOf(ctx.user))),
  /** Ends the bake-off with no winner: every contender not_chosen (those still running are stopped). */
  dismiss: operatorProcedure.input(ZDismissInput).mutation(({ ctx, input }) => dismissBakeOff(ctx, input, actorOf(ctx.user))),
});
