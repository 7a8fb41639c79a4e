// The project's agent record (viewer role, docs/bake-off.md, "The agent record: how it is
// computed"): per coder agent and model, tasks, approval rate, medians, bake-offs and choices
// in a time window. Thin: server/agent-record/record.ts does the work; prices come from settings.json.
import { agentRecord, ZAgentRecordInput } from "../../agent-record/record";
import { fileSettings } from "../../projects/config-edits";
import { router, viewerProcedure } from "../trpc";

export const agentRecordRouter = router({
  stats: viewerProcedure.input(ZAgentRecordInput).query(({ ctx, input }) => agentRecord(ctx, input, fileSettings().pricing)),
});
