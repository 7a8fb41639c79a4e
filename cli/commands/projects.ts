// `catcafe projects list|show|add`: the projects tasks run on. `add` registers one (operator):
// a repository on the server, the commands its tests may run, and an agent per role — a
// CLI (claude, codex, gemini), an HTTP model (openai:<model>, anthropic:<model>), or
// `simulated`; anything else from a JSON file. Its `.catcafe/` is checked on the spot with
// the files' own messages.
import fs from "node:fs";
import { getUntypedClient } from "@trpc/client";
import type { Command } from "commander";
import { agentPreset, isPresetRole, PRESET_ROLES, type PresetRole } from "../../lib/agent-presets";
import type { CatCafeClient, RouterInputs } from "../../lib/client";
import type { AgentConfigInput } from "../../server/agents/config";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { settingText, table } from "../output";
import { examples } from "./help";
import { registerProjectSetupCommands } from "./project-setup";

type ProjectInput = RouterInputs["projects"]["upsert"];

/** `role=kind[:model]` as a project record's agent. */
export function agentFromFlag(flag: string): [PresetRole, AgentConfigInput] {
  const [, role, kind, model] = /^([a-z]+)=([a-z]+)(?::(.+))?$/.exec(flag.trim()) ?? [];
  if (!isPresetRole(role) || kind === undefined)
    throw new CliError(
      `--agent ${flag}: write role=kind[:model], role one of ${PRESET_ROLES.join(", ")} (e.g. coder=claude, reviewer=openai:gpt-5)`,
      { code: "USAGE" },
    );
  const preset = agentPreset(role, kind, model);
  if ("problem" in preset) throw new CliError(`--agent ${flag}: ${preset.problem}; others with --agents-file`, { code: "USAGE" });
  return [role, preset.agent];
}

/**
 * The agents of an --agents-file ({ role: agent config }), as read: the server's schemas judge
 * them (the CLI loads none of the server's code), so the CLI checks only that it is an object.
 */
export function agentsFromFile(file: string): Record<string, unknown> {
  const json: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
  if (json === null || typeof json !== "object" || Array.isArray(json))
    throw new CliError(`--agents-file ${file}: write a JSON object of role → agent config`, { code: "USAGE" });
  return { ...json };
}

/**
 * projects.upsert, with an --agents-file's agents under those of the --agent flags (`input`'s).
 * The file's have no type here (only the server's schemas can check them), so with a file
 * the call goes through tRPC's untyped client, whose input is `unknown` by design; the rest
 * of the input is typed all the same.
 */
export async function registerProject(client: CatCafeClient, input: ProjectInput, fileAgents?: Record<string, unknown>): Promise<void> {
  if (fileAgents === undefined) await client.projects.upsert.mutate(input);
  else await getUntypedClient(client).mutation("projects.upsert", { ...input, agents: { ...fileAgents, ...input.agents } });
}

/** `node --test **` → ["node", "--test", "**"]: an allowlist rule, written as a person types it. */
export function ruleFromFlag(rule: string): string[] {
  const tokens = rule.trim().split(/\s+/).filter(Boolean);
  if (!tokens.length) throw new CliError('--allow needs a command pattern, like "npm test" or "node --test **"', { code: "USAGE" });
  return tokens;
}

export function registerProjectCommands(program: Command): void {
  const projects = program.command("projects").description("the projects tasks run on");

  projects
    .command("list", { isDefault: true })
    .description("projects a task can be started on")
    .addHelpText("after", examples(["catcafe projects list"]))
    .action(async (_options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const list = await ctx.client().projects.list.query();
      ctx.out.result(list, () =>
        list.length
          ? table(
              ["ID", "NAME", "AGENTS"],
              list.map((p) => [p.id, p.name, p.simulated ? "simulated" : "real"]),
            )
          : "No projects yet: an admin adds one with `catcafe projects add` (or Settings → Projects).",
      );
    });

  projects
    .command("show")
    .description("a project: repository, allowlist, agents, settings in force and its .catcafe/ (operator)")
    .argument("<id>", "the project")
    .addHelpText("after", examples(["catcafe projects show demo", "catcafe projects show demo --json"]))
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const all = await ctx.client().settings.projects.query();
      const p = all.find((x) => x.id === id);
      if (!p) throw new CliError(`no project "${id}" (projects: ${all.map((x) => x.id).join(", ") || "none"})`, { code: "NOT_FOUND" });
      ctx.out.result(p, () => [
        `${p.id} — ${p.name}`,
        `repository: ${p.repoPath}`,
        `iteration cap: ${p.maxIterations} (${p.maxIterationsSource})`,
        `allowlist: ${p.allowlist.map((r) => r.join(" ")).join("; ") || "(empty: no command may run)"}`,
        `agents: ${p.agents.map((a) => `${a.role}=${a.id} (${a.kind}${a.model ? ` ${a.model}` : ""}, ${a.source})`).join("; ") || "none"}`,
        `.catcafe/: ${p.config.found ? `v${p.config.configVersion ?? "?"} at ${p.config.commit?.slice(0, 10)}` : "none"}${p.config.errors.length ? `\n  ${p.config.errors.join("\n  ")}` : ""}`,
        ...table(
          ["SETTING", "VALUE", "FROM"],
          p.settings.map((s) => [s.path, settingText(s.value), s.source]),
        ),
      ]);
    });

  projects
    .command("add")
    .description("register a project (operator): its repository on the server, the commands tests may run, an agent per role")
    .argument("<id>", "lowercase letters, digits and '-'")
    .requiredOption("-r, --repo <path>", "the git repository, as a path on the server")
    .option("-n, --name <name>", "a name people read (default: the id)")
    .option(
      "-a, --allow <pattern>",
      'a command tests may run, e.g. "npm test" or "node --test **" (repeatable)',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option(
      "--agent <role=kind[:model]>",
      "coder=claude, reviewer=openai:gpt-5, tester=simulated, ... (repeatable)",
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option("--agents-file <file>", "the agents as JSON ({ role: agent config }), for what --agent cannot say")
    .option("--max-iterations <n>", "review and test loops before a session stops (default 3)")
    .option("--webhook <url>", "POSTed to whenever a session needs a person")
    .addHelpText(
      "after",
      examples([
        'catcafe projects add shop --repo /srv/repos/shop --allow "npm test" --agent coder=claude --agent reviewer=openai:gpt-5 --agent tester=codex',
        "catcafe projects add shop --repo /srv/repos/shop --agents-file agents.json --json",
      ]),
    )
    .action(
      async (
        id: string,
        options: {
          repo: string;
          name?: string;
          allow: string[];
          agent: string[];
          agentsFile?: string;
          maxIterations?: string;
          webhook?: string;
        },
        command: Command,
      ) => {
        const ctx = CliContext.of(command);
        const client = ctx.client();
        const fromFile = options.agentsFile === undefined ? undefined : agentsFromFile(options.agentsFile);
        const fromFlags: ProjectInput["agents"] = {};
        for (const flag of options.agent) {
          const [role, agent] = agentFromFlag(flag);
          fromFlags[role] = agent;
        }
        const maxIterations = options.maxIterations === undefined ? undefined : Number(options.maxIterations);
        await registerProject(
          client,
          {
            id,
            name: options.name ?? id,
            repoPath: options.repo,
            allowlist: options.allow.map(ruleFromFlag),
            agents: fromFlags,
            ...(maxIterations === undefined ? {} : { maxIterations }),
            ...(options.webhook ? { webhook: { url: options.webhook, format: "json" as const } } : {}),
          },
          fromFile,
        );
        const agents = { ...fromFile, ...fromFlags };
        // The repository's .catcafe/ at HEAD, checked now with the files' own messages.
        const check = await client.ops.validateConfig.mutate({ projectId: id });
        ctx.out.result({ id, config: check }, () =>
          [
            `Registered project ${id} (${options.repo}).`,
            !check.found
              ? "No .catcafe/ in the repository: the agents above play every role."
              : check.ok
                ? ".catcafe/ loads without a problem."
                : `.catcafe/ has problems (tasks are refused until they are fixed):\n  ${check.errors.join("\n  ")}`,
            Object.keys(agents).length ? "" : "No agents given: every role must come from the repository's .catcafe/agents.json.",
            `Roles and readiness: catcafe projects agents ${id}; bind one: catcafe projects agent ${id} <role> --kind …`,
          ].filter(Boolean),
        );
      },
    );

  registerProjectSetupCommands(projects);
}
