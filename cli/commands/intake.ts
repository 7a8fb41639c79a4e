// `catcafe intake …` (docs/intake.md): a project's intake rules (show, set), its webhook secret
// (set from stdin or a flag, never echoed; shown only as when and by whom) and the deliveries
// held in the inbox (list, start, dismiss): the intake procedures of server/api/routers/intake.ts.
import type { Command } from "commander";
import { parseContenders } from "../../lib/bake-off";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { shortTime, table } from "../output";
import { ask, readStdin } from "../prompt";
import { examples } from "./help";

const TRIGGERS = ["label", "assignment", "comment"] as const;
type Trigger = (typeof TRIGGERS)[number];

interface RulesOptions {
  provider?: string;
  repository?: string;
  apiBaseUrl?: string;
  botUser?: string;
  maxPerHour?: string;
  label?: string | boolean;
  assignment?: boolean;
  comment?: boolean;
  off?: string[];
  workflow?: string[];
  bakeOff?: string[];
  autoConfirm?: string[];
  remove?: boolean;
}

function triggerOf(name: string, flag: string): Trigger {
  if (!(TRIGGERS as readonly string[]).includes(name))
    throw new CliError(`${flag}: ${name} is not a trigger (label, assignment or comment)`, { code: "USAGE" });
  return name as Trigger;
}

/** The rules with the flags applied over what is saved (rules are saved whole). */
export function rulesFromFlags(saved: Record<string, unknown> | null, o: RulesOptions): Record<string, unknown> {
  const rules: Record<string, unknown> = { ...saved };
  if (o.provider !== undefined) rules.provider = o.provider;
  if (o.repository !== undefined) rules.repository = o.repository;
  if (o.apiBaseUrl !== undefined) rules.apiBaseUrl = o.apiBaseUrl || undefined;
  if (o.botUser !== undefined) rules.botUser = o.botUser || undefined;
  if (o.maxPerHour !== undefined) {
    const n = Number(o.maxPerHour);
    if (!Number.isInteger(n)) throw new CliError(`--max-per-hour: ${o.maxPerHour} is not a whole number`, { code: "USAGE" });
    rules.maxPerHour = n;
  }
  const triggers: Record<string, Record<string, unknown>> = { ...((saved?.triggers as Record<string, Record<string, unknown>>) ?? {}) };
  if (o.label !== undefined) triggers.label = { ...triggers.label, ...(typeof o.label === "string" ? { name: o.label } : {}) };
  if (o.assignment) triggers.assignment = { ...triggers.assignment };
  if (o.comment) triggers.comment = { ...triggers.comment };
  for (const spec of o.workflow ?? []) {
    const [name, workflow] = spec.split("=");
    const trigger = triggerOf(name ?? "", "--workflow");
    if (!workflow)
      throw new CliError(`--workflow ${spec}: say which, as trigger=workflow (review_loop, forge or bake_off)`, { code: "USAGE" });
    const { bakeOff: _contenders, ...rest } = triggers[trigger] ?? {};
    triggers[trigger] = workflow === "bake_off" ? { ...triggers[trigger], workflow } : { ...rest, workflow };
  }
  // A bake-off trigger's contenders (docs/bake-off.md): trigger=coder,coder:model,…
  for (const spec of o.bakeOff ?? []) {
    const at = spec.indexOf("=");
    const trigger = triggerOf(at < 0 ? spec : spec.slice(0, at), "--bake-off");
    const contenders = at < 0 ? [] : parseContenders(spec.slice(at + 1));
    if (!contenders.length) throw new CliError(`--bake-off ${spec}: name the contenders, as trigger=coder,coder:model`, { code: "USAGE" });
    triggers[trigger] = { ...triggers[trigger], workflow: "bake_off", bakeOff: { contenders } };
  }
  for (const name of o.autoConfirm ?? []) {
    const trigger = triggerOf(name, "--auto-confirm");
    triggers[trigger] = { ...triggers[trigger], autoConfirm: true };
  }
  for (const name of o.off ?? []) delete triggers[triggerOf(name, "--off")];
  rules.triggers = triggers;
  return JSON.parse(JSON.stringify(rules)) as Record<string, unknown>;
}

type ShownRule = {
  workflow: string;
  autoConfirm: boolean;
  name?: string;
  bakeOff?: { contenders: Array<{ coder: string; model?: string }> };
};

function triggerLines(rules: { triggers: Record<string, ShownRule | undefined> }): string[][] {
  return TRIGGERS.flatMap((t) => {
    const rule = rules.triggers[t];
    if (!rule) return [];
    const workflow = rule.bakeOff
      ? `bake_off (${rule.bakeOff.contenders.map((c) => (c.model ? `${c.coder}:${c.model}` : c.coder)).join(", ")})`
      : rule.workflow;
    return [[t === "label" ? `label "${rule.name}"` : t, workflow, rule.autoConfirm ? "yes" : "no"]];
  });
}

export function registerIntakeCommands(program: Command): void {
  const intake = program
    .command("intake")
    .description("tasks from GitHub and GitLab issues: a project's intake rules, its webhook secret, the held deliveries");

  intake
    .command("show")
    .description("a project's intake rules, whether its webhook secret is set (when, by whom) and the receivers' URLs")
    .argument("<project>", "the project")
    .addHelpText("after", examples(["catcafe intake show shop", "catcafe intake show shop --json"]))
    .action(async (projectId: string, _o: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const shown = await ctx.client().intake.show.query({ projectId });
      ctx.out.result(shown, () => [
        shown.rules
          ? `${shown.rules.provider} ${shown.rules.repository} (at most ${shown.rules.maxPerHour} tasks an hour)`
          : "No intake rules.",
        ...(shown.rules?.botUser ? [`bot user: ${shown.rules.botUser}`] : []),
        ...(shown.rules ? table(["TRIGGER", "WORKFLOW", "AUTO-CONFIRM"], triggerLines(shown.rules)) : []),
        shown.secret ? `Webhook secret: set on ${shortTime(shown.secret.setAt)} by ${shown.secret.setBy}` : "Webhook secret: not set",
        `Receivers: ${shown.receivers.github} (GitHub), ${shown.receivers.gitlab} (GitLab)`,
      ]);
    });

  intake
    .command("rules")
    .description("set a project's intake rules (operator): flags change what is saved; --remove removes them")
    .argument("<project>", "the project")
    .option("--provider <provider>", "github or gitlab")
    .option("--repository <repo>", "GitHub owner/name, GitLab group/name or the project id")
    .option("--api-base-url <url>", "the tracker's API for the write-access check (Enterprise, self-hosted)")
    .option("--bot-user <login>", "the user whose assignment starts a task")
    .option("--max-per-hour <n>", "tasks intake may start per hour (default 10)")
    .option("--label [name]", "a label starts a task (default name catcafe)")
    .option("--assignment", "an assignment to the bot user starts a task")
    .option("--comment", "a /catcafe comment from a member with write access starts a task")
    .option("--off <trigger...>", "turn these triggers off")
    .option("--workflow <trigger=workflow...>", "the workflow a trigger starts: review_loop (default), forge or bake_off")
    .option("--bake-off <trigger=coders...>", "a trigger starts a bake-off of these coders (coder or coder:model, comma-separated)")
    .option("--auto-confirm <trigger...>", "these triggers' tasks are confirmed by system:intake")
    .option("--remove", "remove the project's intake rules")
    .addHelpText(
      "after",
      examples([
        "catcafe intake rules shop --provider github --repository acme/shop --label",
        "catcafe intake rules shop --comment --bot-user catcafe-bot --assignment --workflow assignment=forge",
        "catcafe intake rules shop --auto-confirm label --max-per-hour 5",
        "catcafe intake rules shop --label bake-off --bake-off label=claude-coder,codex-coder:o3",
        "catcafe intake rules shop --off comment",
        "catcafe intake rules shop --remove",
      ]),
    )
    .action(async (projectId: string, o: RulesOptions, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      const current = await client.intake.show.query({ projectId });
      const rules = o.remove ? null : rulesFromFlags(current.rules as Record<string, unknown> | null, o);
      const saved = await client.intake.setRules.mutate({ projectId, rules, expectedVersion: current.version });
      const now = await client.intake.show.query({ projectId });
      ctx.out.result({ ...saved, rules: now.rules }, () => [
        saved.changed ? `Saved: change #${saved.version}.` : "Nothing changed.",
        ...(now.rules ? table(["TRIGGER", "WORKFLOW", "AUTO-CONFIRM"], triggerLines(now.rules)) : ["No intake rules."]),
      ]);
    });

  intake
    .command("secret")
    .description("set or rotate a project's webhook secret (operator): read from stdin or typed unseen, never shown again")
    .argument("<project>", "the project")
    .option("--secret-stdin", "read the secret from stdin")
    .option("--secret <value>", "the secret itself (visible to ps and shell history: prefer --secret-stdin)")
    .addHelpText(
      "after",
      examples(["openssl rand -hex 32 | tee /dev/stderr | catcafe intake secret shop --secret-stdin", "catcafe intake secret shop"]),
    )
    .action(async (projectId: string, o: { secretStdin?: boolean; secret?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const secret = o.secretStdin
        ? await readStdin("the webhook secret")
        : (o.secret ??
          (await ask("Webhook secret: ", {
            secret: true,
            missing: "give the secret with --secret-stdin (piped) or type it at a terminal",
          })));
      const set = await ctx.client().intake.setSecret.mutate({ projectId, secret });
      ctx.out.result(
        set,
        () => `Webhook secret of ${projectId} ${set.rotated ? "rotated" : "set"} on ${shortTime(set.setAt)} by ${set.setBy}.`,
      );
    });

  intake
    .command("inbox")
    .description("deliveries that matched a rule but were held (no permission, not ready, rate limited): list, --start or --dismiss one")
    .option("-p, --project <id>", "only this project's (needed with --start and --dismiss)")
    .option("--start <delivery>", "start the held delivery's task (operator)")
    .option("--dismiss <delivery>", "dismiss it (operator)")
    .addHelpText(
      "after",
      examples(["catcafe intake inbox", "catcafe intake inbox --project shop --start 72d3162e-cc78-11e3-81ab-4c9367dc0958"]),
    )
    .action(async (o: { project?: string; start?: string; dismiss?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      if (o.start || o.dismiss) {
        if (!o.project) throw new CliError("--start and --dismiss need --project", { code: "USAGE" });
        if (o.start) {
          const started = await client.intake.startHeld.mutate({ projectId: o.project, deliveryId: o.start });
          ctx.out.result(started, () => `Started ${started.sessionId}.`);
        } else {
          const dismissed = await client.intake.dismissHeld.mutate({ projectId: o.project, deliveryId: o.dismiss! });
          ctx.out.result(dismissed, () => `Dismissed ${dismissed.dismissed}.`);
        }
        return;
      }
      const held = await client.intake.held.query(o.project ? { projectId: o.project } : {});
      ctx.out.result(held, () =>
        held.length
          ? table(
              ["DELIVERY", "PROJECT", "ISSUE", "REASON", "SINCE", "DETAIL"],
              held.map((i) => [i.deliveryId, i.projectId, `${i.repository}#${i.issueNumber}`, i.reason, shortTime(i.since), i.detail]),
            )
          : "No held delivery.",
      );
    });
}
