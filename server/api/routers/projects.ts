// Projects a task can be started on: anyone signed in lists them; an admin registers or
// updates one (repository, allowlist, agents per role, iteration cap).
import { ZProjectInput, listProjects, upsertProject } from "../../projects/projects";
import { requireRepository } from "../../workspaces/repo";
import { adminProcedure, router, viewerProcedure } from "../trpc";

export const projectsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listProjects(ctx.pool)),
  upsert: adminProcedure.input(ZProjectInput).mutation(async ({ ctx, input }) => {
    await requireRepository(input.repoPath); // a clear error now rather than at the first task
    const project = await upsertProject(ctx.pool, input);
    return { id: project.id, name: project.name };
  }),
});
