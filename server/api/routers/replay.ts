// Replay (req E6): a session's state, round and outputs as of any event position, folded
// from its events (server/sessions/replay.ts). Viewers may replay.
import { replayAt, ZReplayInput } from "../../sessions/replay";
import { router, viewerProcedure } from "../trpc";

export const replayRouter = router({
  at: viewerProcedure.input(ZReplayInput).query(({ ctx, input }) => replayAt({ store: ctx.store, pool: ctx.pool }, input)),
});
