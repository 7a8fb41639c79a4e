// Replay (req E6): a session's state, round and outputs as of any event position, folded
// from its events (server/sessions/replay.ts). Viewers may replay.
// People are named (req X2): labels in summaries replaced, `names` for the actor fields.
import { withUserNames } from "../../auth/names";
import { replayAt, ZReplayInput } from "../../sessions/replay";
import { router, viewerProcedure } from "../trpc";

export const replayRouter = router({
  at: viewerProcedure.input(ZReplayInput).query(async ({ ctx, input }) => {
    const { value, names } = await withUserNames(ctx.prisma, await replayAt({ store: ctx.store, pool: ctx.pool }, input));
    return { ...value, names };
  }),
});
