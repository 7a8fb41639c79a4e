// `catcafe sessions list`, `catcafe session show <id>` and `catcafe export <id> --out <dir>`:
// reading sessions (viewer).
import path from "node:path";
import type { Command } from "commander";
import { checkExportDir, downloadExport, writeExportFiles, type RouterInputs, type SessionListItem } from "../../lib/client";
import { CliContext } from "../context";
import { shortTime, table } from "../output";
import { examples } from "./help";
import { oneLine, parseInteger } from "./watch";

interface ListOptions {
  state?: string;
  workflow?: string;
  createdBy?: string;
  mine?: boolean;
  limit: number;
  cursor?: string;
}

function sessionRows(items: SessionListItem[]): string[] {
  return table(
    ["ID", "STATE", "WORKFLOW", "EVENTS", "UPDATED", "TITLE"],
    items.map((s) => [
      s.id,
      s.state,
      s.workflow,
      String(s.version),
      shortTime(s.updatedAt),
      `${s.title}${s.parentId ? ` (fork of ${s.parentId})` : ""}`,
    ]),
  );
}

export function registerSessionCommands(program: Command): void {
  program
    .command("sessions")
    .description("sessions, newest first")
    .command("list", { isDefault: true })
    .description("list sessions, newest first, with filters")
    .option("--state <state>", "only in this state (e.g. awaiting_operator_confirm, approved, failed)")
    .option("--workflow <id>", "only of this workflow (review_loop, planning)")
    .option("--created-by <actor>", "only started by this actor (as stored, e.g. user:<id>)")
    .option("--mine", "only the ones you started")
    .option("--limit <n>", "at most this many (1–200)", parseInteger("--limit", 1), 20)
    .option("--cursor <cursor>", "the next page: the nextCursor of the previous one")
    .addHelpText(
      "after",
      examples([
        "catcafe sessions list",
        "catcafe sessions list --state awaiting_operator_confirm",
        "catcafe sessions list --mine --limit 5 --json | jq -r '.items[].id'",
      ]),
    )
    .action(async (options: ListOptions, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      let createdBy = options.createdBy;
      if (options.mine) {
        const me = await client.auth.me.query();
        if (me) createdBy = `user:${me.id}`;
      }
      const input: RouterInputs["sessions"]["list"] = {
        state: options.state,
        workflow: options.workflow,
        createdBy,
        limit: options.limit,
        cursor: options.cursor,
      };
      const page = await client.sessions.list.query(input);
      ctx.out.result(page, () => [
        ...(page.items.length ? sessionRows(page.items) : ["No sessions."]),
        ...(page.nextCursor ? [`More: catcafe sessions list --cursor ${page.nextCursor}`] : []),
      ]);
    });

  program
    .command("session")
    .description("one session")
    .command("show", { isDefault: true })
    .description("a session's state and its latest timeline entries")
    .argument("<session>", "session id (s-…)")
    .option("--events <n>", "how many of the latest timeline entries", parseInteger("--events", 0), 20)
    .addHelpText("after", examples(["catcafe session show s-1a2b3c4d5e6f", "catcafe session show s-1a2b3c4d5e6f --events 100 --json"]))
    .action(async (sessionId: string, options: { events: number }, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      const task = await client.tasks.get.query({ sessionId });
      const timeline =
        options.events > 0
          ? await client.sessions.timeline.query({
              sessionId,
              afterVersion: Math.max(0, task.version - options.events),
              limit: Math.min(options.events, 1000),
            })
          : [];
      ctx.out.result({ task, timeline }, () => [
        `${sessionId}  ${task.status === "finished" ? `finished: ${task.outcome}` : `${task.status}, in ${task.fsm}`}`,
        `  project   ${task.project ? `${task.project.id} (${task.project.name})` : "-"}`,
        `  workflow  ${task.workflow ?? "-"} (${task.mode ?? "-"} mode), iteration ${task.iteration}`,
        `  step      ${task.step ? `${task.step.role} in ${task.step.state}` : "-"}`,
        `  prompt    ${(task.prompt ?? "-").split("\n")[0]}`,
        ...(timeline.length
          ? ["", ...timeline.map((e) => `  ${shortTime(e.recordedAt)}  #${e.version}  ${e.type}  ${e.actor}  ${oneLine(e.summary)}`)]
          : []),
      ]);
    });

  program
    .command("export")
    .description("export a session in the export layout (req E8) (summary.json, task-events.jsonl, task-timeline.json, rounds/<nn>/...)")
    .argument("<session>", "session id (s-…)")
    .requiredOption("-o, --out <dir>", "a new or empty directory to write into")
    .addHelpText(
      "after",
      examples(["catcafe export s-1a2b3c4d5e6f --out ./s-1a2b3c4d5e6f", "catcafe export s-1a2b3c4d5e6f -o /tmp/export --json"]),
    )
    .action(async (sessionId: string, options: { out: string }, command: Command) => {
      const ctx = CliContext.of(command);
      await checkExportDir(options.out);
      ctx.out.progress(`downloading the export of ${sessionId}…`);
      const files = await downloadExport(ctx.connection(), sessionId);
      ctx.out.progress(`writing ${files.size} files to ${options.out}…`);
      await writeExportFiles(files, options.out);
      const names = [...files.keys()];
      ctx.out.result({ sessionId, outDir: path.resolve(options.out), files: names }, () => [
        `Exported ${sessionId} to ${options.out} (${names.length} files):`,
        ...names.map((n) => `  ${n}`),
      ]);
    });
}
