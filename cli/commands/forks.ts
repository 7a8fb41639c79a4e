// `catcafe session fork | revert | modify | resume` and `catcafe forge resume | modify |
// revert` (req E5, F5–F7): what a person makes of a session's history, each a procedure of
// server/api/routers/sessions.ts recorded with you as the actor. A fork's parent never changes.
import type { Command } from "commander";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { examples } from "./help";
import { textFrom } from "./tasks";
import { parseInteger } from "./watch";

interface Forked {
  sessionId: string;
  parentId: string;
  atVersion: number;
}

const forkedLine = (what: string, r: Forked) =>
  `${what}: ${r.sessionId} (from ${r.parentId} at event ${r.atVersion}; the original is unchanged).`;

/** revert, modify and resume, on `parent` (session or forge). */
function registerHistoryCommands(parent: Command, prefix: string, workflow?: string): void {
  parent
    .command("revert")
    .description("fork a session that keeps everything before a stage (or a state's entry) and runs again from it (operator)")
    .argument("<session>", "session id")
    .requiredOption("--to <stage|state>", "the stage (prd, design, plan, coding, …) or state to run again from")
    .option("--iteration <n>", "a state's entry in this iteration (default: the latest)", parseInteger("--iteration", 1))
    .option("--note <text>", "why, in your words")
    .addHelpText("after", examples([`catcafe ${prefix} revert s-1a2b3c4d5e6f --to design --note "a simpler design"`]))
    .action(async (sessionId: string, options: { to: string; iteration?: number; note?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const r = await ctx.client().sessions.revert.mutate({ sessionId, ...options });
      ctx.out.result(r, () => forkedLine(`Reverted to ${options.to}`, r));
    });

  parent
    .command("modify")
    .description("from a finished session: a fork that makes a change (triaged, patched, checked, reported) (operator)")
    .argument("<session>", "session id of the finished base")
    .argument("[change...]", "the change (or --file)")
    .option("-f, --file <path>", "read the change from a file (- for stdin)")
    .option("--note <text>", "why, in your words")
    .addHelpText("after", examples([`catcafe ${prefix} modify s-1a2b3c4d5e6f "Add a --lines option"`]))
    .action(async (sessionId: string, words: string[], options: { file?: string; note?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const change = (await textFrom(words, options.file, "change")).trim();
      const r = await ctx.client().sessions.modify.mutate({ sessionId, change, ...(options.note ? { note: options.note } : {}) });
      ctx.out.result(r, () => forkedLine("Modifying", r));
    });

  parent
    .command("resume")
    .description(
      "continue an interrupted session from its first incomplete step (default: the latest interrupted one); nothing completed runs again (operator)",
    )
    .argument("[session]", "session id")
    .option("--max-calls <n>", "a new budget, for a session that ran out of it: agent calls at most", parseInteger("--max-calls", 1))
    .option("--max-tokens <n>", "a new budget: tokens at most", parseInteger("--max-tokens", 1))
    .addHelpText("after", examples([`catcafe ${prefix} resume`, `catcafe ${prefix} resume s-1a2b3c4d5e6f --max-calls 60`]))
    .action(async (sessionId: string | undefined, options: { maxCalls?: number; maxTokens?: number }, command: Command) => {
      const ctx = CliContext.of(command);
      const budget =
        options.maxCalls || options.maxTokens
          ? { ...(options.maxCalls ? { maxCalls: options.maxCalls } : {}), ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}) }
          : undefined;
      const r = await ctx.client().sessions.resume.mutate({
        ...(sessionId ? { sessionId } : {}),
        ...(workflow ? { workflow } : {}),
        ...(budget ? { budget } : {}),
      });
      ctx.out.result(r, () => `${r.sessionId}: ${r.message}`);
    });
}

/** `catcafe session fork|revert|modify|resume`. */
export function registerForkCommands(session: Command): void {
  session
    .command("fork")
    .description("fork a session at an event position: the new session inherits events 1..N and goes on from there (operator)")
    .argument("<session>", "session id")
    .requiredOption("--at <n>", "the event position (see `catcafe session show` or the replay view)", parseInteger("--at", 1))
    .option("--reason <reason>", "manual (go on from there) or revert (run again from there)", "manual")
    .option("--note <text>", "why, in your words")
    .addHelpText("after", examples(['catcafe session fork s-1a2b3c4d5e6f --at 14 --note "try without the cache"']))
    .action(async (sessionId: string, options: { at: number; reason: string; note?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      if (options.reason !== "manual" && options.reason !== "revert")
        throw new CliError(
          `--reason is manual or revert (got "${options.reason}"); a change of a finished session is \`catcafe session modify\``,
          {
            code: "USAGE",
          },
        );
      const r = await ctx.client().sessions.fork.mutate({
        sessionId,
        atVersion: options.at,
        reason: options.reason,
        ...(options.note ? { note: options.note } : {}),
      });
      ctx.out.result(r, () => forkedLine("Forked", r));
    });
  registerHistoryCommands(session, "session");
}

/** `catcafe forge resume|modify|revert` (resume picks the latest interrupted Forge session). */
export function registerForgeHistoryCommands(forge: Command): void {
  registerHistoryCommands(forge, "forge", "forge");
}
