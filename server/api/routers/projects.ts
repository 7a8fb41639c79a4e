// Projects a task can be started on: anyone signed in lists them; operators list the
// workflows they can start and whether each is ready (its roles bound); an operator
// registers one (repository, allowlist, agents per role, iteration cap, settings overrides —
// the access lists and an existing project's other settings stay an admin's, docs/auth.md).
import { registerProject } from "../../projects/config-edits";
import { ZProjectInput, listProjects } from "../../projects/projects";
import { requireRepository } from "../../workspaces/repo";
import { startableWorkflows } from "../../projects/workflows";
import { workflowReadiness } from "../../projects/roles";
import { z } from "zod";
import { operatorProcedure, router, viewerProcedure } from "../trpc";
import { actorOf } from "./tasks";

export const projectsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listProjects(ctx.pool)),
  /** The workflows a task can start with: the built-ins, and each project's own (.catcafe/runtimes.json at HEAD). */
  workflows: operatorProcedure.query(({ ctx }) => startableWorkflows(ctx.pool)),
  /** Each workflow of each project (or of one): ready, or the roles no agent plays (req X2). */
  readiness: operatorProcedure
    .input(z.object({ projectId: z.string().min(1).max(100).optional() }).optional())
    .query(({ ctx, input }) => workflowReadiness(ctx.pool, input?.projectId)),
  upsert: operatorProcedure.input(ZProjectInput).mutation(async ({ ctx, input }) => {
    await requireRepository(input.repoPath); // a clear error now rather than at the first task
    // Recorded in the project's configuration history (ConfigChanged), with its actor.
    await registerProject(ctx, input, actorOf(ctx.user), { role: ctx.user.role });
    return { id: input.id, name: input.name };
  }),
});
