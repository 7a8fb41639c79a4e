// Lineage (req E5): the fork tree a session belongs to, from its root ancestor down to
// every descendant (server/sessions/lineage-tree.ts). Viewers may read it.
import { lineageTree, ZLineageInput } from "../../sessions/lineage-tree";
import { router, viewerProcedure } from "../trpc";

export const lineageRouter = router({
  tree: viewerProcedure.input(ZLineageInput).query(({ ctx, input }) => lineageTree(ctx, input)),
});
