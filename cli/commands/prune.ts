// `catcafe sessions prune` (req F14; docs/operations.md, "Cleaning up failed sessions"): the
// workspaces of finished, unsuccessful sessions that ended more than N days ago are cleaned up —
// a runner removes each worktree and the git refs only it needed; the events stay. Operator.
import type { Command } from "commander";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { shortTime, table } from "../output";
import { examples } from "./help";
import { parseInteger } from "./watch";

interface PruneOptions {
  failed?: boolean;
  outcome?: string;
  olderThan?: number;
  dryRun?: boolean;
}

export function registerPruneCommand(sessions: Command): void {
  sessions
    .command("prune")
    .description(
      "clean up the workspaces (worktree, branch, pins) of failed sessions that ended more than N days ago; events stay (operator)",
    )
    .option("--failed", "sessions that ended failed")
    .option(
      "--outcome <list>",
      "sessions that ended with one of these outcomes, comma-separated (e.g. failed,cancelled,max_iterations_reached)",
    )
    .option("--older-than <days>", "that ended more than this many days ago (0: every one that ended)", parseInteger("--older-than", 0))
    .option("--dry-run", "list what would be cleaned up; change nothing")
    .addHelpText(
      "after",
      examples([
        "catcafe sessions prune --failed --older-than 30 --dry-run",
        "catcafe sessions prune --failed --older-than 30",
        "catcafe sessions prune --outcome failed,cancelled,max_iterations_reached --older-than 14 --json",
      ]),
    )
    .action(async (options: PruneOptions, command: Command) => {
      const ctx = CliContext.of(command);
      const outcomes = [...(options.failed ? ["failed"] : []), ...(options.outcome ?? "").split(",").map((o) => o.trim())].filter(Boolean);
      if (!outcomes.length) throw new CliError("say which sessions: --failed, or --outcome <list> (e.g. failed,cancelled)");
      if (options.olderThan === undefined) throw new CliError("say how old: --older-than <days> (since the session ended)");
      const result = await ctx
        .client()
        .sessions.prune.mutate({ olderThanDays: options.olderThan, outcomes: [...new Set(outcomes)], dryRun: options.dryRun ?? false });
      ctx.out.result(result, () => {
        const what = `${result.outcomes.join(", ")} sessions that ended more than ${result.olderThanDays} days ago`;
        if (!result.sessions.length && !result.skipped.length)
          return `Nothing to clean up: no ${what} (or their workspaces were cleaned up already).`;
        return [
          result.dryRun
            ? `Would clean up ${result.sessions.length} workspace(s) of ${what} (dry run: nothing asked):`
            : `Cleaning up ${result.sessions.length} workspace(s) of ${what}; a runner removes each:`,
          ...table(
            ["ID", "OUTCOME", "ENDED", "TITLE"],
            result.sessions.map((s) => [s.sessionId, s.outcome, shortTime(s.endedAt), s.title]),
          ),
          ...result.skipped.map((s) => `skipped ${s.sessionId}: ${s.message}`),
        ];
      });
    });
}
