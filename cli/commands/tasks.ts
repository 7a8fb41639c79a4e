// `catcafe task start | confirm | followup | rerun | cancel` (req W1, W3, W9): the
// operator's commands, each one tRPC mutation recorded with you as the actor.
import fs from "node:fs";
import { Option, type Command } from "commander";
import { parseContenders } from "../../lib/bake-off";
import type { CatCafeClient } from "../../lib/client";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { readStdin } from "../prompt";
import { examples } from "./help";
import { watchSession } from "./watch";

/** Words given on the command line, or a file (`-`: stdin). */
export async function textFrom(words: string[], file: string | undefined, what: string): Promise<string> {
  if (file !== undefined && words.length) throw new CliError(`give the ${what} as words or with --file, not both`);
  if (file === "-") return readStdin(`the ${what}`);
  if (file !== undefined) {
    try {
      return fs.readFileSync(file, "utf8");
    } catch (err) {
      throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
    }
  }
  return words.join(" ");
}

/** --project, else CATCAFE_PROJECT, else the only project there is. */
export async function resolveProject(client: CatCafeClient, given: string | undefined): Promise<string> {
  const asked = given ?? process.env.CATCAFE_PROJECT;
  if (asked) return asked;
  const projects = await client.projects.list.query();
  if (projects.length === 1) return projects[0]!.id;
  const list = projects.map((p) => `${p.id} (${p.name})`).join(", ") || "none";
  throw new CliError(`which project? pass --project <id> (projects: ${list})`, { code: "USAGE" });
}

interface StartOptions {
  project?: string;
  mode?: string;
  workflow?: string;
  title?: string;
  file?: string;
  watch?: boolean;
  bakeOff?: string;
}

/** A mode of the workflow: the server checks it against the workflow's own modes. */
export const modeOption = () =>
  new Option(
    "-m, --mode <mode>",
    "proposal (roundtable, then your confirm), implementation (build at once), or a mode of your own workflow; default: the project's",
  );

export function registerTaskCommands(program: Command): void {
  const task = program.command("task").description("start and steer tasks (operator)");

  task
    .command("start")
    .description("start a task: a prompt, a project and an execution mode")
    .argument("[prompt...]", "what the task is (or --file)")
    .option("-p, --project <id>", "project id (default: CATCAFE_PROJECT, or the only project)")
    .addOption(modeOption())
    .option("-w, --workflow <id>", "workflow (default: the project's, else review_loop)")
    .option("-t, --title <title>", "title (default: the prompt's first line)")
    .option("-f, --file <file>", "read the prompt from a file (`-`: stdin)")
    .option("--watch", "then watch it until it ends (or waits for your confirm)")
    .option(
      "--bake-off <coders>",
      "a bake-off (docs/bake-off.md): 2 to 6 coders, comma-separated, each coder or coder:model; forks at your confirm",
    )
    .addHelpText(
      "after",
      examples([
        'catcafe task start --project demo "Fix slugify() so the tests pass"',
        'catcafe task start -p demo --bake-off claude-coder,codex-coder,codex-coder:o3 "Fix slugify()"',
        "catcafe task start -p demo -m implementation -f task.md --watch",
        'catcafe task start -p demo "Add a --dry-run flag" --json | jq -r .sessionId',
      ]),
    )
    .action(async (words: string[], options: StartOptions, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      const prompt = await textFrom(words, options.file, "prompt");
      const projectId = await resolveProject(client, options.project);
      const started = await client.tasks.start.mutate({
        projectId,
        prompt,
        mode: options.mode,
        workflow: options.workflow,
        title: options.title,
        ...(options.bakeOff ? { bakeOff: { contenders: parseContenders(options.bakeOff) } } : {}),
      });
      const summary = await client.tasks.get.query({ sessionId: started.sessionId });
      ctx.out.result({ ...started, workflow: summary.workflow, mode: summary.mode, projectId }, () => [
        `Started ${started.sessionId} on ${projectId} (${summary.workflow}, ${summary.mode} mode).`,
        ...(options.watch ? [] : [`Watch it: catcafe watch ${started.sessionId}`]),
      ]);
      if (options.watch) process.exitCode = await watchSession(ctx, started.sessionId, { stopWhenWaiting: true });
    });

  task
    .command("confirm")
    .description("confirm a proposal: the session moves into implementation, in the same thread")
    .argument("<session>", "session id (s-…)")
    .option("--watch", "then watch it until it ends")
    .addHelpText("after", examples(["catcafe task confirm s-1a2b3c4d5e6f", "catcafe task confirm s-1a2b3c4d5e6f --watch"]))
    .action(async (sessionId: string, options: { watch?: boolean }, command: Command) => {
      const ctx = CliContext.of(command);
      const result = await ctx.client().tasks.confirm.mutate({ sessionId, via: "cli" });
      ctx.out.result(result, () => `Confirmed ${sessionId}: the implementation starts.`);
      if (options.watch) process.exitCode = await watchSession(ctx, sessionId, { afterVersion: result.version });
    });

  task
    .command("followup")
    .description("append an operator message to the session's thread (while awaiting confirm it is answered 'pending confirmation')")
    .argument("<session>", "session id (s-…)")
    .argument("[text...]", "the message (or --file)")
    .option("-f, --file <file>", "read the message from a file (`-`: stdin)")
    .addHelpText(
      "after",
      examples([
        'catcafe task followup s-1a2b3c4d5e6f "Keep the public API unchanged"',
        "catcafe task followup s-1a2b3c4d5e6f -f notes.md",
      ]),
    )
    .action(async (sessionId: string, words: string[], options: { file?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const text = await textFrom(words, options.file, "message");
      const result = await ctx.client().tasks.followUp.mutate({ sessionId, text });
      ctx.out.result(result, () => `Added your message to ${sessionId}.`);
    });

  task
    .command("rerun")
    .description("start a new execution with the same prompt and configuration, as a fork of the session")
    .argument("<session>", "session id (s-…)")
    .option("--watch", "then watch the new session")
    .addHelpText("after", examples(["catcafe task rerun s-1a2b3c4d5e6f", "catcafe task rerun s-1a2b3c4d5e6f --watch --json"]))
    .action(async (sessionId: string, options: { watch?: boolean }, command: Command) => {
      const ctx = CliContext.of(command);
      const result = await ctx.client().tasks.rerun.mutate({ sessionId });
      ctx.out.result(result, () => [
        `Rerunning ${sessionId} as ${result.sessionId} (a fork).`,
        ...(options.watch ? [] : [`Watch it: catcafe watch ${result.sessionId}`]),
      ]);
      if (options.watch) process.exitCode = await watchSession(ctx, result.sessionId, { stopWhenWaiting: true });
    });

  task
    .command("cancel")
    .description("cancel a running session: its agent is stopped and it ends `cancelled`")
    .argument("<session>", "session id (s-…)")
    .option("-r, --reason <reason>", "why (recorded in the timeline)")
    .addHelpText("after", examples(["catcafe task cancel s-1a2b3c4d5e6f", 'catcafe task cancel s-1a2b3c4d5e6f --reason "wrong project"']))
    .action(async (sessionId: string, options: { reason?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const result = await ctx.client().tasks.cancel.mutate({ sessionId, reason: options.reason });
      ctx.out.result(result, () => `Cancelled ${sessionId}.`);
    });
}
