// Operations behind the CLI's `config validate`, `shells detect`, `brains check`, `go` and
// `projections rebuild`. Thin: each calls its domain module. Reading a project's
// configuration and starting a run are operator work; probing the server's CLIs, calling
// providers with the server's keys and rebuilding read models are admin work.
import { z } from "zod";
import { detectShells, SHELL_NAMES } from "../../agents/shells/detect";
import { checkProjectBrains, ZCheckBrainsInput } from "../../ops/brains";
import { validateConfigSource, ZValidateConfigInput } from "../../ops/config";
import { goTask, ZGoInput } from "../../ops/go";
import { rebuildAndCompare } from "../../ops/projections";
import { adminProcedure, operatorProcedure, router } from "../trpc";
import { actorOf } from "./tasks";

const ZDetectShellsInput = z.object({ shells: z.array(z.enum(SHELL_NAMES)).min(1).optional() }).prefault({});

export const opsRouter = router({
  // A mutation only so that uploaded files travel in a POST body, not a URL; it changes nothing.
  validateConfig: operatorProcedure.input(ZValidateConfigInput).mutation(({ ctx, input }) => validateConfigSource(ctx.pool, input)),
  detectShells: adminProcedure.input(ZDetectShellsInput).query(({ input }) => detectShells({ shells: input.shells })),
  checkBrains: adminProcedure.input(ZCheckBrainsInput).mutation(({ ctx, input }) => checkProjectBrains(ctx.pool, input)),
  go: operatorProcedure
    .input(ZGoInput)
    .mutation(({ ctx, input }) => goTask({ store: ctx.store, pool: ctx.pool }, input, actorOf(ctx.user))),
  rebuildProjections: adminProcedure.mutation(({ ctx }) => rebuildAndCompare(ctx.store)),
});
