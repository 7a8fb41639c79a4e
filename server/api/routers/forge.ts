// The Forge pipeline (req F1–F14, docs/forge.md): operators start a pipeline from an idea and act at its gates
// (edit, feedback, pass) and stops (retry, guidance, abort); viewers read its status and
// artifacts. Thin: server/forge does the work and records the actor.
import {
  artifactText,
  choose,
  editArtifact,
  giveFeedback,
  newForge,
  passGate,
  readForgeStatus,
  statusActors,
  ZForgeArtifactInput,
  ZForgeChooseInput,
  ZForgeEditInput,
  ZForgeFeedbackInput,
  ZForgeNewInput,
  ZForgeRef,
} from "../../tasks/forge";
import type { TaskDeps } from "../../tasks/commands";
import { userNames } from "../../auth/users";
import { fileSettings } from "../../projects/config-edits";
import { operatorProcedure, router, viewerProcedure } from "../trpc";
import { actorOf } from "./tasks";

const deps = (ctx: TaskDeps) => ({ store: ctx.store, pool: ctx.pool });

export const forgeRouter = router({
  new: operatorProcedure.input(ZForgeNewInput).mutation(({ ctx, input }) => newForge(deps(ctx), input, actorOf(ctx.user))),
  edit: operatorProcedure.input(ZForgeEditInput).mutation(({ ctx, input }) => editArtifact(deps(ctx), input, actorOf(ctx.user))),
  feedback: operatorProcedure.input(ZForgeFeedbackInput).mutation(({ ctx, input }) => giveFeedback(deps(ctx), input, actorOf(ctx.user))),
  pass: operatorProcedure.input(ZForgeRef).mutation(({ ctx, input }) => passGate(deps(ctx), input, actorOf(ctx.user))),
  choose: operatorProcedure.input(ZForgeChooseInput).mutation(({ ctx, input }) => choose(deps(ctx), input, actorOf(ctx.user))),
  /** The pipeline, its usage (the usage projection, as every reader shows it), and the names of the people it credits. */
  status: viewerProcedure.input(ZForgeRef).query(async ({ ctx, input }) => {
    const status = await readForgeStatus(deps(ctx), input.sessionId, fileSettings().pricing);
    return { ...status, names: await userNames(ctx.prisma, statusActors(status)) };
  }),
  /** One version of an artifact, by hash: the viewer and the diff between drafts load it when opened. */
  artifact: viewerProcedure
    .input(ZForgeArtifactInput)
    .query(async ({ ctx, input }) => artifactText(deps(ctx), await ctx.store.readStream(input.sessionId), input.hash)),
});
