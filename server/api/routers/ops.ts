// Operations behind the CLI's `config validate`, `shells detect`, `brains check`, `go` and
// `projections rebuild`. Thin: each calls its domain module. Reading a project's
// configuration and starting a run are operator work; probing the server's CLIs, calling
// providers with the server's keys and rebuilding read models are admin work.
import { z } from "zod";
import { detectShells, SHELL_NAMES } from "../../agents/shells/detect";
import { rebuildAndCompare } from "../../events/rebuild";
import { checkProjectBrains, ZCheckBrainsInput } from "../../projects/brains";
import { detectConfiguredShells } from "../../projects/shells";
import { validateConfigSource, ZValidateConfigInput } from "../../projects/validate-config";
import { startTaskForAgent, ZStartForAgentInput } from "../../tasks/start-for-agent";
import { adminProcedure, operatorProcedure, router } from "../trpc";
import { actorOf } from "./tasks";

const ZDetectShellsInput = z
  .object({
    shells: z.array(z.enum(SHELL_NAMES)).min(1).optional(),
    /** Also each shell this project's .catcafe/shells.json configures with its own command. */
    projectId: z.string().min(1).max(100).optional(),
  })
  .prefault({});

export const opsRouter = router({
  // A mutation only so that uploaded files travel in a POST body, not a URL; it changes nothing.
  validateConfig: operatorProcedure.input(ZValidateConfigInput).mutation(({ ctx, input }) => validateConfigSource(ctx.pool, input)),
  detectShells: adminProcedure.input(ZDetectShellsInput).query(async ({ ctx, input }) => {
    const found: Array<Awaited<ReturnType<typeof detectShells>>[number] & { shellId?: string; command?: string }> = await detectShells({
      shells: input.shells,
    });
    return input.projectId ? [...found, ...(await detectConfiguredShells(ctx.pool, input.projectId))] : found;
  }),
  checkBrains: adminProcedure.input(ZCheckBrainsInput).mutation(({ ctx, input }) => checkProjectBrains(ctx, input)),
  go: operatorProcedure
    .input(ZStartForAgentInput)
    .mutation(({ ctx, input }) => startTaskForAgent({ store: ctx.store, pool: ctx.pool }, input, actorOf(ctx.user))),
  rebuildProjections: adminProcedure.mutation(({ ctx }) => rebuildAndCompare(ctx.store)),
});
