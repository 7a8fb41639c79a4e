// `catcafe sessions list`, `catcafe session show <id>`, `catcafe session state <id>` and
// `catcafe export <id> --out <dir>`: reading sessions (viewer); `catcafe sessions prune`
// (./prune.ts) cleans up failed ones.
import path from "node:path";
import type { Command } from "commander";
import {
  checkExportDir,
  downloadExport,
  writeExportFiles,
  type RouterInputs,
  type RouterOutputs,
  type SessionListItem,
} from "../../lib/client";
import { usageLine } from "../../lib/usage";
import { SESSION_WORKFLOW_IDS } from "../../lib/workflow-ids";
import { CliContext } from "../context";
import { shortTime, table } from "../output";
import { registerForkCommands } from "./forks";
import { registerPruneCommand } from "./prune";
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
  const sessions = program.command("sessions").description("sessions, newest first; clean up failed ones' workspaces");
  registerPruneCommand(sessions);
  sessions
    .command("list", { isDefault: true })
    .description("list sessions, newest first, with filters")
    .option("--state <state>", "only in this state (e.g. awaiting_operator_confirm, approved, failed)")
    .option("--workflow <id>", `only of this workflow (${SESSION_WORKFLOW_IDS.join(", ")}, or a project's own)`)
    .option("--created-by <actor>", "only started by this actor (as stored, e.g. user:<id>)")
    .option("--mine", "only the ones you started")
    .option("--limit <n>", "at most this many (1–200)", parseInteger("--limit", 1), 20)
    .option("--cursor <cursor>", "the next page: the nextCursor of the previous one")
    .addHelpText(
      "after",
      examples([
        "catcafe sessions list",
        "catcafe sessions list --state awaiting_operator_confirm",
        "catcafe sessions list --workflow forge",
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

  const session = program.command("session").description("one session: show it, fork, revert, modify or resume it");
  registerForkCommands(session);
  session
    .command("show", { isDefault: true })
    .description("a session's state and its latest timeline entries")
    .argument("<session>", "session id (s-…)")
    .option("--events <n>", "how many of the latest timeline entries", parseInteger("--events", 0), 20)
    .option(
      "--context",
      "the runtime execution context (operator): run id, workflow, limits, each role's agent, shell, brain and FSM, each agent run, the worktree",
    )
    .addHelpText(
      "after",
      examples([
        "catcafe session show s-1a2b3c4d5e6f",
        "catcafe session show s-1a2b3c4d5e6f --events 100 --json",
        "catcafe session show s-1a2b3c4d5e6f --context",
      ]),
    )
    .action(async (sessionId: string, options: { events: number; context?: boolean }, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      if (options.context) {
        const context = await client.tasks.runtimeContext.query({ sessionId });
        ctx.out.result(context, () => (context ? contextLines(context) : `${sessionId} has no task: no runtime context.`));
        return;
      }
      const task = await client.tasks.get.query({ sessionId });
      // Its live worktrees, host and path, for an operator (a viewer may not see paths on the runners).
      const context = await client.tasks.runtimeContext.query({ sessionId }).catch(() => null);
      const usage = await client.usage.session.query({ sessionId });
      const timeline =
        options.events > 0
          ? await client.sessions.timeline.query({
              sessionId,
              afterVersion: Math.max(0, task.version - options.events),
              limit: Math.min(options.events, 1000),
            })
          : [];
      ctx.out.result({ task, usage, timeline, ...(context ? { worktrees: context.worktrees } : {}) }, () => [
        `${sessionId}  ${task.status === "finished" ? `finished: ${task.outcome}` : `${task.status}, in ${task.fsm}`}`,
        `  project   ${task.project ? `${task.project.id} (${task.project.name})` : "-"}`,
        `  workflow  ${task.workflow ?? "-"} (${task.mode ?? "-"} mode), iteration ${task.iteration}`,
        `  step      ${task.step ? `${task.step.role} in ${task.step.state}` : "-"}`,
        ...(context ? worktreeLines(context.worktrees, "  worktree  ") : []),
        `  prompt    ${(task.prompt ?? "-").split("\n")[0]}`,
        `  usage     ${usageLine(usage.total, usage.currency)}${usage.byModel.length === 1 ? ` (${usage.byModel[0]?.model})` : ""}`,
        ...(usage.byModel.length > 1 ? usage.byModel.map((m) => `            ${m.model}: ${usageLine(m, usage.currency)}`) : []),
        ...(timeline.length
          ? ["", ...timeline.map((e) => `  ${shortTime(e.recordedAt)}  #${e.version}  ${e.type}  ${e.actorName}  ${oneLine(e.summary)}`)]
          : []),
      ]);
    });

  session
    .command("state")
    .description(
      "where the session is now, as one JSON document (req M10): workflow, state, iteration, stage, roles, step, budget, outcome, fork",
    )
    .argument("<session>", "session id (s-…)")
    .addHelpText("after", examples(["catcafe session state s-1a2b3c4d5e6f", "catcafe session state s-1a2b3c4d5e6f | jq '.step, .budget'"]))
    .action(async (sessionId: string, _options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const document = await ctx.client().sessions.state.query({ sessionId });
      // JSON with or without --json: the document is the answer (the seed's state file, read).
      ctx.out.result(document, () => JSON.stringify(document, null, 2));
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

type RuntimeContextOutput = NonNullable<RouterOutputs["tasks"]["runtimeContext"]>;

/** Each live worktree as `host:path` (docs/scaling.md: on the host of the runner that made it), or that there is none. */
function worktreeLines(worktrees: RuntimeContextOutput["worktrees"], label: string): string[] {
  if (!worktrees.length) return [`${label}none on any runner host`];
  return worktrees.map((w, i) => `${i === 0 ? label : " ".repeat(label.length)}${w.host}:${w.path}`);
}

/** The runtime execution context (req M6) as a person reads it; secrets are never in it (key variables by name only). */
function contextLines(c: RuntimeContextOutput): string[] {
  const source = c.source.dir
    ? `${c.source.dir}/ v${c.source.configVersion} at ${c.source.commit.slice(0, 12)} (${c.source.files.join(", ")})`
    : `no .catcafe/: the project record's agents, at ${c.source.commit.slice(0, 12)}`;
  const limits = c.limits
    ? `step timeout ${c.limits.stepTimeoutMs} ms, ${c.limits.maxAttempts} attempts, backoff ${c.limits.backoffMs.join(", ")} ms, commands ${c.limits.commandTimeoutMs} ms`
    : "the built-in defaults (recorded before limits were)";
  const field = (v: Record<string, unknown> | null, key: string) => (v && typeof v[key] === "string" ? (v[key] as string) : null);
  return [
    `${c.sessionId}  run ${c.runId}, ${shortTime(c.createdAt)}${c.inheritedFrom ? ` (inherited from ${c.inheritedFrom})` : ""}`,
    `  workflow   ${c.workflow.id} v${c.workflow.version}${c.workflow.userDefined ? " (the repository's own, snapshotted)" : ""}`,
    `  config     ${source}`,
    `  limits     ${limits}`,
    ...worktreeLines(c.worktrees, "  worktree   "),
    "",
    ...table(
      ["ROLE", "AGENT", "KIND", "SHELL", "BRAIN / MODEL", "FSM", "FROM"],
      Object.entries(c.agents).map(([role, a]) => [
        role,
        a.agentId,
        a.runtimeKind,
        a.shell ? `${field(a.shell, "id") ?? "?"} (${field(a.shell, "kind") ?? "?"})` : "-",
        a.brain ? `${field(a.brain, "id") ?? "?"}: ${field(a.brain, "model") ?? "-"}` : "-",
        a.fsm.id,
        a.source === "config" ? ".catcafe" : "project record",
      ]),
    ),
    ...(c.runs.length
      ? [
          "",
          ...table(
            ["STEP", "ROLE", "STATE", "ATTEMPT", "FSM"],
            c.runs.map((r) => [
              r.stepId.slice(0, 8),
              r.role,
              r.workflowState,
              String(r.attempt),
              [r.history[0]?.from ?? r.fsmState, ...r.history.map((h) => h.to ?? `(${h.event}: no transition)`)].join(" → "),
            ]),
          ),
        ]
      : []),
  ];
}
