// `catcafe usage` (docs/delivery.md, "Usage and cost"): the tokens the agents reported and what they cost, per project
// and per day over the last days (viewer). One session's usage is in `catcafe session show`.
import type { Command } from "commander";
import { usageLine } from "../../lib/usage";
import { CliContext } from "../context";
import { table } from "../output";
import { examples } from "./help";
import { parseInteger } from "./watch";

export function registerUsageCommand(program: Command): void {
  program
    .command("usage")
    .description("tokens and cost per project and per day (prices from settings.json's pricing table)")
    .option("--days <n>", "the last n days, today included (1–366)", parseInteger("--days", 1), 30)
    .option("--project <id>", "only this project")
    .addHelpText("after", examples(["catcafe usage", "catcafe usage --days 7 --project demo --json"]))
    .action(async (options: { days: number; project?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const report = await ctx
        .client()
        .usage.report.query({ days: options.days, ...(options.project ? { projectId: options.project } : {}) });
      const row = (name: string, u: (typeof report)["total"]) => [name, usageLine(u, report.currency)];
      ctx.out.result(report, () => [
        `Since ${report.since}: ${usageLine(report.total, report.currency)}`,
        ...(report.byProject.length
          ? [
              "",
              ...table(
                ["PROJECT", "USAGE"],
                report.byProject.map((p) => row(p.projectName ? `${p.projectId} (${p.projectName})` : (p.projectId ?? "-"), p)),
              ),
              "",
              ...table(
                ["DAY", "USAGE"],
                report.byDay.map((d) => row(d.day, d)),
              ),
            ]
          : []),
      ]);
    });
}
