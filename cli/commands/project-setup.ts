// `catcafe projects agents|agent|delivery` (req X2): an operator wires a project from the
// command line as from its settings page — who plays each role (an agent CLI, a brain, a
// command, simulated), which workflows are ready, and how approved work is delivered (with a
// Test). Saved through settings.configureProject: each save is recorded in the project's
// history (`catcafe settings history --project <id>`) and can be reverted.
import type { Command } from "commander";
import type { RouterInputs } from "../../lib/client";
import { argvFromText, CHOICE_KINDS, PROVIDERS, SHELLS, agentForChoice, type RoleChoice } from "../../lib/role-agents";
import { PRESET_ROLES, isPresetRole } from "../../lib/agent-presets";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { table } from "../output";
import { examples } from "./help";

type ConfigureInput = RouterInputs["settings"]["configureProject"];

interface AgentOptions {
  kind: string;
  shell?: string;
  provider?: string;
  model?: string;
  baseUrl?: string;
  keyEnv?: string;
  argv?: string;
  prompt?: string;
  check?: boolean;
}

/** The choice the flags describe (`--kind none`: null, the role unbound). */
export function choiceFromFlags(o: AgentOptions): RoleChoice | null {
  const usage = (message: string) => new CliError(message, { code: "USAGE" });
  switch (o.kind) {
    case "none":
      return null;
    case "shell": {
      const shell = SHELLS.find((s) => s === o.shell);
      if (!shell) throw usage(`--kind shell needs --shell ${SHELLS.join("|")}`);
      return { kind: "shell", shell, ...(o.model ? { model: o.model } : {}) };
    }
    case "brain": {
      const provider = PROVIDERS.find((p) => p === (o.provider ?? "openai"));
      if (!provider) throw usage(`--provider must be ${PROVIDERS.join(" or ")}`);
      if (!o.model) throw usage("--kind brain needs --model (e.g. gpt-5, claude-sonnet-4-5)");
      return {
        kind: "brain",
        provider,
        model: o.model,
        ...(o.baseUrl ? { baseUrl: o.baseUrl } : {}),
        ...(o.keyEnv ? { apiKeyEnv: o.keyEnv } : {}),
      };
    }
    case "command": {
      const argv = argvFromText(o.argv ?? "");
      if (!argv.length) throw usage('--kind command needs --argv "<executable> <args…>"');
      return { kind: "command", argv, prompt: o.prompt === "arg" ? "arg" : "stdin" };
    }
    case "simulated":
      return { kind: "simulated" };
    default:
      throw usage(`--kind must be one of ${[...CHOICE_KINDS, "none"].join(", ")}`);
  }
}

interface DeliveryOptions {
  method?: string;
  remote?: string;
  target?: string;
  tokenEnv?: string;
  prProvider?: string;
  prRepository?: string;
  prApiBaseUrl?: string;
  test?: boolean;
}

/** The delivery fields the flags set ("" clears one: inherited again). */
export function deliveryFromFlags(o: DeliveryOptions): Partial<ConfigureInput> {
  const value = (v: string | undefined) => (v === undefined ? undefined : v === "" ? null : v);
  const fields: Partial<ConfigureInput> = {};
  if (o.method !== undefined) fields.deliveryMethod = value(o.method);
  if (o.remote !== undefined) fields.deliveryRemote = value(o.remote);
  if (o.target !== undefined) fields.deliveryTarget = value(o.target);
  if (o.tokenEnv !== undefined) fields.deliveryTokenEnv = value(o.tokenEnv);
  if (o.prProvider !== undefined || o.prRepository !== undefined || o.prApiBaseUrl !== undefined) {
    if (o.prProvider === "") fields.deliveryPullRequest = null;
    else
      fields.deliveryPullRequest = {
        provider: o.prProvider ?? "github",
        ...(o.prRepository ? { repository: o.prRepository } : {}),
        ...(o.prApiBaseUrl ? { apiBaseUrl: o.prApiBaseUrl } : {}),
      };
  }
  return fields;
}

const show = (v: unknown) => (v === undefined || v === null ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v));

export function registerProjectSetupCommands(projects: Command): void {
  projects
    .command("agents")
    .description("who plays each role of a project, and which workflows are ready (operator)")
    .argument("<id>", "the project")
    .addHelpText("after", examples(["catcafe projects agents shop", "catcafe projects agents shop --json"]))
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const roles = await ctx.client().settings.roles.query({ projectId: id });
      ctx.out.result(roles, () => [
        ...table(
          ["ROLE", "PROJECT RECORD", ".catcafe/agents.json", "NEEDED BY"],
          roles.roles.map((r) => [
            r.role,
            r.record ? `${show(r.record.kind)}${r.record.model ? ` ${show(r.record.model)}` : ""} (${show(r.record.id)})` : "—",
            r.repository ? r.repository.id : "—",
            r.neededBy.join(", ") || "—",
          ]),
        ),
        "",
        ...roles.readiness.map((w) => (w.ready ? `${w.workflow}: ready` : `${w.workflow}: NOT READY — ${w.reason}`)),
      ]);
    });

  projects
    .command("agent")
    .description("bind a role of a project to an agent: an agent CLI, a brain, a command, simulated, or none (operator)")
    .argument("<id>", "the project")
    .argument("<role>", PRESET_ROLES.join(", "))
    .requiredOption("--kind <kind>", `${[...CHOICE_KINDS, "none"].join(", ")}`)
    .option("--shell <cli>", `with --kind shell: ${SHELLS.join(", ")}`)
    .option("--provider <provider>", `with --kind brain: ${PROVIDERS.join(", ")} (default openai)`)
    .option("--model <model>", "the model (a brain's, or a CLI's instead of its default)")
    .option("--base-url <url>", "with --kind brain: the endpoint (default the provider's)")
    .option("--key-env <name>", "with --kind brain: the variable holding the key, from the admin's list (access.agentEnv)")
    .option("--argv <command line>", 'with --kind command: the executable and its arguments, e.g. "node agent.mjs {prompt}"')
    .option("--prompt <how>", "with --kind command: stdin (default) or arg (replaces {prompt})")
    .option("--check", "check the agent (its brain, its CLI on the runners, or the command) without saving")
    .addHelpText(
      "after",
      examples([
        "catcafe projects agent shop planner --kind shell --shell claude",
        "catcafe projects agent shop planner --kind brain --provider openai --model gpt-5 --key-env OPENAI_API_KEY --check",
        'catcafe projects agent shop tester --kind command --argv "node tools/tester.mjs"',
        "catcafe projects agent shop executor --kind none",
      ]),
    )
    .action(async (id: string, role: string, options: AgentOptions, command: Command) => {
      const ctx = CliContext.of(command);
      if (!isPresetRole(role)) throw new CliError(`<role> must be one of ${PRESET_ROLES.join(", ")}`, { code: "USAGE" });
      const choice = choiceFromFlags(options);
      const client = ctx.client();
      const agent = choice ? (agentForChoice(role, choice) as Record<string, unknown>) : null;
      if (options.check) {
        if (!agent) throw new CliError("--check needs an agent to check (not --kind none)", { code: "USAGE" });
        const check = await client.settings.checkRole.mutate({ projectId: id, role, agent });
        ctx.out.result(check, () => `${check.ok ? "ok" : "NOT OK"}: ${check.message}`);
        if (!check.ok) process.exitCode = 1;
        return;
      }
      const saved = await client.settings.configureProject.mutate({ projectId: id, agents: { [role]: agent } });
      const readiness = await client.projects.readiness.query({ projectId: id });
      ctx.out.result({ ...saved, readiness }, () => [
        saved.changes.length
          ? `${agent ? `Bound ${role} of ${id} to ${show(agent.kind)} (${show(agent.id)})` : `Unbound ${role} of ${id}`}: change #${saved.version}.`
          : "Nothing changed.",
        ...readiness.map((w) => (w.ready ? `${w.workflow}: ready` : `${w.workflow}: not ready — ${w.reason}`)),
      ]);
    });

  projects
    .command("delivery")
    .description("a project's delivery settings: show, set (operator), --test them from the web server")
    .argument("<id>", "the project")
    .option("--method <method>", "merge, push or pull_request")
    .option("--remote <remote>", "a remote of the repository (its name, URL or path)")
    .option("--target <branch>", "the branch merged into, or the pull request's base")
    .option("--token-env <name>", "the variable holding the token, from the admin's list (access.deliveryTokenEnv)")
    .option("--pr-provider <provider>", 'github or gitlab ("" removes the pull request settings)')
    .option("--pr-repository <repo>", "GitHub owner/name, GitLab group/name or id")
    .option("--pr-api-base-url <url>", "the provider's API (Enterprise, self-hosted)")
    .option("--test", "test the delivery: git ls-remote against the remote (and the provider's API) with the token")
    .addHelpText(
      "after",
      examples([
        "catcafe projects delivery shop",
        "catcafe projects delivery shop --method push --remote origin --target main --token-env SHOP_PUSH_TOKEN --test",
        "catcafe projects delivery shop --method pull_request --pr-provider github --pr-repository acme/shop",
        'catcafe projects delivery shop --remote ""',
      ]),
    )
    .action(async (id: string, options: DeliveryOptions, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      const fields = deliveryFromFlags(options);
      const saved = Object.keys(fields).length ? await client.settings.configureProject.mutate({ projectId: id, ...fields }) : null;
      const effective = await client.settings.effective.query({ projectId: id });
      const delivery = effective.settings.filter((s) => s.path.startsWith("delivery."));
      const test = options.test ? await client.settings.testDelivery.mutate({ projectId: id }) : null;
      ctx.out.result({ saved, delivery, test }, () => [
        ...(saved ? [saved.changes.length ? `Saved: change #${saved.version}.` : "Nothing changed."] : []),
        ...table(
          ["SETTING", "VALUE", "FROM"],
          delivery.map((s) => [s.path, show(s.value), s.source]),
        ),
        ...(test
          ? [
              "",
              `Test (${test.method}, from the web server): ${test.ok ? "ok" : "FAILED"} — ${test.message}`,
              ...test.steps.map((s) => `  ${s.ok ? "✓" : "✗"} ${s.what}: ${s.message}`),
              ...(test.tokenSet === false ? ["  the token variable is not set in the web server's environment"] : []),
            ]
          : []),
      ]);
      if (test && !test.ok) process.exitCode = 1;
    });
}
