// `catcafe inbox` (what needs a person, and acknowledging it) and `catcafe config` (the
// settings in force, each with where it comes from, and their history): the inbox and
// settings procedures of server/api/routers/inbox.ts and settings.ts.
import type { Command } from "commander";
import { CliContext } from "../context";
import { settingText, shortTime, table } from "../output";
import { examples } from "./help";

export function registerAttentionCommands(program: Command): void {
  program
    .command("inbox")
    .description("sessions that need a person: waiting for a confirm, escalated, failed (not yet acknowledged)")
    .option("-p, --project <id>", "only this project's")
    .option("--mine", "only the sessions you started")
    .option("--ack <session>", "acknowledge one (operator): it leaves the inbox until it needs someone again")
    .addHelpText("after", examples(["catcafe inbox", "catcafe inbox --project demo --mine", "catcafe inbox --ack s-0123456789ab"]))
    .action(async (options: { project?: string; mine?: boolean; ack?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      if (options.ack) {
        const acked = await client.inbox.acknowledge.mutate({ sessionId: options.ack });
        ctx.out.result({ sessionId: options.ack, ...acked }, () => `Acknowledged ${options.ack}.`);
        return;
      }
      const inbox = await client.inbox.list.query({
        ...(options.project ? { projectId: options.project } : {}),
        ...(options.mine ? { mine: true } : {}),
      });
      ctx.out.result(inbox, () =>
        inbox.items.length
          ? table(
              ["SESSION", "NEEDS", "PROJECT", "STATE / OUTCOME", "SINCE", "TITLE"],
              inbox.items.map((i) => [i.sessionId, i.attention, i.projectId ?? "—", i.outcome ?? i.state, shortTime(i.since), i.title]),
            )
          : "Nothing needs a person right now.",
      );
    });
}

/** `catcafe config [show]`: beside `config validate` (ops.ts), the default of `config`. */
export function registerConfigShow(config: Command): void {
  config
    .command("show", { isDefault: true })
    .description("the settings in force (the server's, or a project's) and where each comes from; --history for who changed what")
    .option("-p, --project <id>", "a project's settings (default: the server's)")
    .option("--history", "the recorded changes, newest first")
    .addHelpText(
      "after",
      examples(["catcafe config", "catcafe config show --project demo", "catcafe config show --project demo --history --json"]),
    )
    .action(async (options: { project?: string; history?: boolean }, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      const scope = options.project ? { projectId: options.project } : {};
      if (options.history) {
        const history = await client.settings.history.query(scope);
        ctx.out.result(history, () =>
          history.length
            ? table(
                ["#", "WHEN", "WHO", "CHANGES"],
                history.map((e) => [
                  `${e.version}${e.revertOf ? ` (revert of #${e.revertOf})` : ""}`,
                  shortTime(e.at),
                  e.actorName,
                  e.changes
                    .map((c) => `${c.path.join(".")}: ${JSON.stringify(c.from ?? null)} → ${JSON.stringify(c.to ?? null)}`)
                    .join("; "),
                ]),
              )
            : "No change recorded yet.",
        );
        return;
      }
      const effective = await client.settings.effective.query(scope);
      ctx.out.result(effective, () => {
        const rows = effective.settings.map((s) => [s.path, settingText(s.value), s.source]);
        if (effective.maxIterations !== null) rows.unshift(["maxIterations", String(effective.maxIterations), "project"]);
        return table(["SETTING", "VALUE", "FROM"], rows);
      });
    });
}
