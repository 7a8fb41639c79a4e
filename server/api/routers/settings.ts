// Configuration, read-only (req M1–M5, M9): projects with allowlists and agents, shells
// found on this machine, brains (with a connectivity check), workflow definitions and
// execution FSMs as graphs. Repository paths, executables and endpoints are for operators
// and admins; workflow definitions are for every member. Editing is not offered here.
// Thin: each procedure calls the projects domain (server/projects/), which owns them.
import { brainsOverview, checkConfiguredBrain, ZCheckBrainInput } from "../../projects/brains";
import { projectsOverview } from "../../projects/overview";
import { shellsOverview } from "../../projects/shells";
import { workflowsOverview } from "../../projects/workflows";
import { operatorProcedure, router, viewerProcedure } from "../trpc";

export const settingsRouter = router({
  projects: operatorProcedure.query(({ ctx }) => projectsOverview(ctx.pool)),
  shells: operatorProcedure.query(({ ctx }) => shellsOverview(ctx.pool)),
  brains: operatorProcedure.query(({ ctx }) => brainsOverview(ctx.pool)),
  checkBrain: operatorProcedure
    .input(ZCheckBrainInput)
    .mutation(({ ctx, input }) => checkConfiguredBrain(ctx.pool, input, { asAdmin: ctx.user.role === "admin" })),
  workflows: viewerProcedure.query(({ ctx }) => workflowsOverview(ctx.pool)),
});
