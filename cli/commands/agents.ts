// `catcafe agents stats` (docs/bake-off.md, "The agent record: how it is computed"): per coder
// agent and model on a project, over a time window, the tasks, approval rate, median
// iterations to approval, median wall time, median cost per approved task, bake-offs and how
// often chosen (viewer). A table by default; `--json` prints the record as the server computed it.
import { InvalidArgumentError, type Command } from "commander";
import { formatAge } from "../../lib/format-time";
import { instantOf } from "../../lib/time-window";
import { formatCost } from "../../lib/usage";
import { CliContext } from "../context";
import { table } from "../output";
import { examples } from "./help";
import { resolveProject } from "./tasks";

function parseInstant(flag: string) {
  return (value: string): string => {
    try {
      return instantOf(value, new Date());
    } catch (err) {
      throw new InvalidArgumentError(`${flag}: ${(err as Error).message}`);
    }
  };
}

const percent = (n: number | null) => (n === null ? "-" : `${Math.round(n * 100)}%`);
const num = (n: number | null) => (n === null ? "-" : Number.isInteger(n) ? String(n) : n.toFixed(1));

export function registerAgentsCommands(program: Command): void {
  const agents = program.command("agents").description("how each agent did on a project: the agent record");
  agents
    .command("stats")
    .description("per coder agent and model: tasks, approval rate, medians (iterations, wall time, cost per approved task), bake-offs")
    .option("-p, --project <id>", "project id (default: CATCAFE_PROJECT, or the only project)")
    .option("--since <when>", "sessions created since: a span back from now (30d, 12h, 2w) or a date (2026-11-01)", parseInstant("--since"))
    .option("--until <when>", "sessions created before this (same forms as --since)", parseInstant("--until"))
    .addHelpText(
      "after",
      examples([
        "catcafe agents stats --project shop",
        "catcafe agents stats --since 30d",
        "catcafe agents stats --since 2026-11-01 --json",
      ]),
    )
    .action(async (options: { project?: string; since?: string; until?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      const projectId = await resolveProject(client, options.project);
      const record = await client.agentRecord.stats.query({
        projectId,
        ...(options.since ? { since: options.since } : {}),
        ...(options.until ? { until: options.until } : {}),
      });
      const window = `${record.since ? `since ${record.since}` : "all time"}${record.until ? `, until ${record.until}` : ""}`;
      ctx.out.result(record, () => [
        `${record.projectId} (${window}): ${record.sessions} session(s), ${record.bakeOffs} bake-off(s)`,
        ...(record.agents.length
          ? [
              "",
              ...table(
                ["AGENT", "MODEL", "TASKS", "APPROVED", "MEDIAN ITER", "MEDIAN WALL", "MEDIAN COST/APPROVED", "BAKE-OFFS", "CHOSEN"],
                record.agents.map((a) => [
                  a.agentId,
                  a.model ?? "unknown",
                  String(a.tasks),
                  `${percent(a.approvalRate)} (${a.approved}/${a.finished})`,
                  num(a.medianIterationsToApproval),
                  a.medianWallMs === null ? "-" : formatAge(a.medianWallMs),
                  a.medianCostPerApprovedTask === null
                    ? "-"
                    : `${formatCost(a.medianCostPerApprovedTask, record.currency)}${a.unpriced.length ? " + unpriced" : ""}`,
                  String(a.bakeOffs),
                  String(a.chosen),
                ]),
              ),
            ]
          : ["No coder ran a task in this window."]),
      ]);
    });
}
