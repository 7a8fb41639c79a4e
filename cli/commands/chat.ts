// `catcafe chat start | say | mode | watch | end | list | modes` (req C1–C8): conversations
// with a project's agents, in a collaboration mode. Each is a procedure of
// server/api/routers/conversations.ts recorded with you as the actor; `watch` prints the
// conversation as it goes (read again every half second) and `--until-idle` returns once no
// call is in flight.
import type { Command } from "commander";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../server/api/root";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { table } from "../output";
import { examples } from "./help";
import { oneLine, parseInteger } from "./watch";

type View = inferRouterOutputs<AppRouter>["conversations"]["get"];
type Entry = View["entries"][number];

const WATCH_INTERVAL_MS = 500;

function parseConfig(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new CliError(`--config is not valid JSON: ${(err as Error).message}`);
  }
}

function noteLine(note: Extract<Entry, { kind: "note" }>["note"]): string {
  switch (note.kind) {
    case "tallied": {
      const totals = note.totals.map((t) => `${t.choice} ${t.weight}`).join(", ");
      return note.winner
        ? `vote ${note.round}: ${note.winner} wins (${note.reason}) [${totals}]`
        : `vote ${note.round}: no winner (${note.reason})`;
    }
    case "routed":
      return `routed to ${note.chosen.join(", ") || "nobody"}: ${note.reason} [${note.candidates.map((c) => `${c.agent} ${c.score}`).join(", ")}]`;
    case "ballot_rejected":
      return `ballot of @${note.agent} rejected: ${note.errors.join("; ")}`;
    case "step":
      return `step ${note.step} → @${note.agent} (visit ${note.visit}, attempt ${note.attempt})`;
    case "sop_completed":
      return `procedure completed: ${note.steps.join(" → ")}`;
    case "needs_person":
      return `a person is needed: ${note.reason}`;
    case "mention_unknown":
      return `unknown agents mentioned: ${note.names.map((n) => `@${n}`).join(", ")}`;
  }
}

export function entryLine(e: Entry): string {
  const at = `${e.at.slice(11, 19)}  `;
  switch (e.kind) {
    case "person":
      return `${at}${e.byName}: ${oneLine(e.text)}`;
    case "agent":
      return `${at}@${e.agent}: ${oneLine(e.text)}`;
    case "system":
      return `${at}· ${oneLine(e.text)}`;
    case "call":
      return `${at}→ @${e.agent} called${e.caller === "person" ? "" : ` by @${e.caller}`}`;
    case "failed":
      return `${at}✘ @${e.agent} could not answer (${e.errorClass}): ${oneLine(e.message)}`;
    case "discarded":
      return `${at}✘ reply${e.agent ? ` of @${e.agent}` : ""} discarded (${e.errorClass}): ${e.reason}`;
    case "note":
      return `${at}· ${noteLine(e.note)}`;
    case "progress":
      return `${at}· progress (${e.progress}): ${e.detail}`;
    case "stalled":
      return `${at}⏸ stalled: ${e.reason}. Nobody is called until a person writes (catcafe chat say).`;
    case "terminated":
      return `${at}■ ended by ${e.byName}: ${e.reason}`;
    case "task":
      return `${at}${e.byName}: ${oneLine(e.text)}\n${" ".repeat(at.length)}▶ task ${e.sessionId} started (catcafe session ${e.sessionId})`;
  }
}

async function watch(ctx: CliContext, sessionId: string, options: { untilIdle?: boolean; after?: number }): Promise<void> {
  let after = options.after ?? 0;
  for (;;) {
    const view = await ctx.client().conversations.get.query({ sessionId });
    for (const e of view.entries.filter((x) => x.version > after)) ctx.out.stream({ type: "entry", entry: e }, entryLine(e));
    after = view.version;
    const idle = view.inFlight.length === 0;
    if (view.status === "terminated" || (options.untilIdle && idle)) {
      ctx.out.stream(
        { type: "status", status: view.status, mode: view.mode, inFlight: view.inFlight.length },
        `${view.status === "terminated" ? "■ ended" : view.status === "stalled" ? "⏸ stalled" : "✔ idle"} (${view.mode})`,
      );
      return;
    }
    await new Promise((r) => setTimeout(r, WATCH_INTERVAL_MS));
  }
}

export function registerChatCommands(program: Command): void {
  const chat = program
    .command("chat")
    .description("talk with a project's agents in a collaboration mode: free_discussion (@mentions), sop, voting, expert_routing");

  chat
    .command("start")
    .description("start a conversation on a project, optionally with a first message (operator)")
    .requiredOption("-p, --project <id>", "the project whose agents take part")
    .option("--mode <mode>", "free_discussion (default), sop, voting or expert_routing")
    .option("--config <json>", "the mode's config as JSON (see `catcafe chat modes`)")
    .option("--stall-after <n>", "agent turns without progress before it stalls (default 4)", parseInteger("--stall-after", 1))
    .option("--title <text>", "a title (default: the first message)")
    .option("--watch", "follow it until no call is in flight")
    .argument("[message...]", "a first message; @name calls an agent")
    .addHelpText(
      "after",
      examples([
        'catcafe chat start -p demo "@coder-sim how would you split slugify()?"',
        `catcafe chat start -p demo --mode voting --config '{"quorum": 2}' "Which test runner?"`,
      ]),
    )
    .action(
      async (
        words: string[],
        options: { project: string; mode?: string; config?: string; stallAfter?: number; title?: string; watch?: boolean },
        command: Command,
      ) => {
        const ctx = CliContext.of(command);
        const message = words.join(" ").trim();
        const modeConfig = parseConfig(options.config);
        const r = await ctx.client().conversations.start.mutate({
          projectId: options.project,
          ...(options.mode ? { mode: options.mode } : {}),
          ...(modeConfig !== undefined ? { modeConfig } : {}),
          ...(options.stallAfter ? { stallAfter: options.stallAfter } : {}),
          ...(options.title ? { title: options.title } : {}),
          ...(message ? { message } : {}),
        });
        if (!options.watch) {
          ctx.out.result(r, () => [`Conversation ${r.sessionId} started.`, `Say something: catcafe chat say ${r.sessionId} "@agent …"`]);
          return;
        }
        // Watching: one JSON object per line from the start (--json), like `watch`.
        ctx.out.stream({ type: "started", ...r }, `Conversation ${r.sessionId} started.`);
        await watch(ctx, r.sessionId, { untilIdle: true });
      },
    );

  chat
    .command("say")
    .description(
      "post a message; @name calls an agent in free discussion; `/task <prompt>` starts a task with the conversation as context (operator)",
    )
    .argument("<conversation>", "conversation id")
    .argument("<message...>", "the message")
    .option("--watch", "follow it until no call is in flight")
    .addHelpText(
      "after",
      examples([
        'catcafe chat say c-1a2b3c4d5e6f "@reviewer-sim is this safe?" --watch',
        'catcafe chat say c-1a2b3c4d5e6f "/task split slugify() as discussed"',
      ]),
    )
    .action(async (sessionId: string, words: string[], options: { watch?: boolean }, command: Command) => {
      const ctx = CliContext.of(command);
      const r = await ctx.client().conversations.post.mutate({ sessionId, text: words.join(" ") });
      // `/task <prompt>` starts a task instead of calling the agents (req W13).
      const said = r.task
        ? `Task ${r.task.sessionId} started from the conversation: catcafe session ${r.task.sessionId}`
        : `Posted; ${r.calls} agent call(s) made.`;
      if (!options.watch) {
        ctx.out.result(r, () => said);
        return;
      }
      ctx.out.stream({ type: "posted", ...r }, said);
      await watch(ctx, sessionId, { untilIdle: true, after: r.posted - 1 });
    });

  chat
    .command("mode")
    .description("show the conversation's mode, or switch it (operator; refused while calls are in flight)")
    .argument("<conversation>", "conversation id")
    .argument("[mode]", "the mode to switch to")
    .option("--config <json>", "the new mode's config as JSON")
    .addHelpText(
      "after",
      examples(["catcafe chat mode c-1a2b3c4d5e6f", `catcafe chat mode c-1a2b3c4d5e6f expert_routing --config '{"maxAgents": 2}'`]),
    )
    .action(async (sessionId: string, mode: string | undefined, options: { config?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      if (!mode) {
        const current = await ctx.client().conversations.mode.query({ sessionId });
        ctx.out.result(current, () => [
          `${current.mode}: ${current.description}`,
          `config: ${JSON.stringify(current.config.config)}`,
          `current step: ${current.state.current_step ?? "none"}; steps so far: ${current.state.step_history.join(", ") || "none"}`,
        ]);
        return;
      }
      const modeConfig = parseConfig(options.config);
      const r = await ctx.client().conversations.setMode.mutate({ sessionId, mode, ...(modeConfig !== undefined ? { modeConfig } : {}) });
      ctx.out.result(r, () => `Mode switched to ${r.mode}: ${r.description}`);
    });

  chat
    .command("watch")
    .description("print the conversation as it goes (Ctrl+C stops watching; the conversation goes on)")
    .argument("<conversation>", "conversation id")
    .option("--until-idle", "return once no call is in flight")
    .addHelpText("after", examples(["catcafe chat watch c-1a2b3c4d5e6f", "catcafe chat watch c-1a2b3c4d5e6f --until-idle --json"]))
    .action(async (sessionId: string, options: { untilIdle?: boolean }, command: Command) => {
      await watch(CliContext.of(command), sessionId, options);
    });

  chat
    .command("end")
    .description("terminate the conversation: nothing more is called; replies still on their way are discarded (operator)")
    .argument("<conversation>", "conversation id")
    .option("--reason <text>", "why")
    .action(async (sessionId: string, options: { reason?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const r = await ctx.client().conversations.terminate.mutate({ sessionId, ...(options.reason ? { reason: options.reason } : {}) });
      ctx.out.result(r, () => `Conversation ${sessionId} ended.`);
    });

  chat
    .command("list")
    .description("the latest conversations")
    .option("-p, --project <id>", "only this project's")
    .action(async (options: { project?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const rows = await ctx.client().conversations.list.query({ ...(options.project ? { projectId: options.project } : {}), limit: 50 });
      ctx.out.result(rows, () =>
        rows.length
          ? table(
              ["ID", "STATE", "MODE", "PROJECT", "TITLE"],
              rows.map((r) => [r.id, r.state, r.mode ?? "", r.projectId ?? "", r.title]),
            )
          : ['No conversations yet: catcafe chat start -p <project> "@agent …"'],
      );
    });

  chat
    .command("modes")
    .description("the collaboration modes")
    .action(async (_options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const modes = await ctx.client().modes.list.query();
      ctx.out.result(modes, () => modes.map((m) => `${m.name.padEnd(16)} ${m.description}`));
    });
}
