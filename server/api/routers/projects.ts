// Projects a task can be started on: anyone signed in lists them; operators list the
// workflows they can start; an admin registers or updates one (repository, allowlist,
// agents per role, iteration cap, settings overrides).
import { registerProject } from "../../projects/config-edits";
import { ZProjectInput, listProjects } from "../../projects/projects";
import { requireRepository } from "../../workspaces/repo";
import { startableWorkflows } from "../../projects/workflows";
import { adminProcedure, operatorProcedure, router, viewerProcedure } from "../trpc";
import { actorOf } from "./tasks";

export const projectsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listProjects(ctx.pool)),
  /** The workflows a task can start with: the built-ins, and each project's own (.catcafe/runtimes.json at HEAD). */
  workflows: operatorProcedure.query(({ ctx }) => startableWorkflows(ctx.pool)),
  upsert: adminProcedure.input(ZProjectInput).mutation(async ({ ctx, input }) => {
    await requireRepository(input.repoPath); // a clear error now rather than at the first task
    // Recorded in the project's configuration history (ConfigChanged), with the admin as actor.
    await registerProject(ctx, input, actorOf(ctx.user));
    return { id: input.id, name: input.name };
  }),
});
