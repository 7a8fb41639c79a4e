// Projects a task can be started on (ids and names only; configuration stays server-side).
import { listProjects } from "../../projects/projects";
import { router, viewerProcedure } from "../trpc";

export const projectsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listProjects(ctx.pool)),
});
