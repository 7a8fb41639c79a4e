// Projects a task can be started on: anyone signed in lists them; operators list the
// workflows they can start; an admin registers or updates one (repository, allowlist,
// agents per role, iteration cap, settings overrides).
import { ZProjectInput, listProjects, upsertProject } from "../../projects/projects";
import { requireRepository } from "../../workspaces/repo";
import { startableWorkflows } from "../../projects/workflows";
import { adminProcedure, operatorProcedure, router, viewerProcedure } from "../trpc";

export const projectsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listProjects(ctx.pool)),
  /** The workflows a task can start with: the built-ins, and each project's own (.catcafe/runtimes.json at HEAD). */
  workflows: operatorProcedure.query(({ ctx }) => startableWorkflows(ctx.pool)),
  upsert: adminProcedure.input(ZProjectInput).mutation(async ({ ctx, input }) => {
    await requireRepository(input.repoPath); // a clear error now rather than at the first task
    const project = await upsertProject(ctx.pool, input);
    return { id: project.id, name: project.name };
  }),
});
