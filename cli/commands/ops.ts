// `catcafe go`, `config validate`, `shells detect`, `brains check`, `runners list`,
// `projects list` and `projections rebuild`: running a workflow for an agent, and looking
// after the installation (the `ops` procedures of server/api/routers/ops.ts).
import fs from "node:fs";
import path from "node:path";
import { Option, type Command } from "commander";
import { CliContext } from "../context";
import { CliError, EXIT } from "../errors";
import { shortTime, table } from "../output";
import { registerConfigShow } from "./attention";
import { examples } from "./help";
import { modeOption, resolveProject, textFrom } from "./tasks";
import { watchSession } from "./watch";

const CONFIG_DIR = ".catcafe";
const SHELLS = ["claude", "codex", "gemini"] as const;

/** `.catcafe/*.json` of a local checkout, by name. */
function readLocalConfig(dir: string): Record<string, string> {
  const configDir = path.join(path.resolve(dir), CONFIG_DIR);
  if (!fs.existsSync(configDir))
    throw new CliError(
      `no ${CONFIG_DIR}/ in ${path.resolve(dir)}: nothing to validate (or pass --project <id> to validate a project on the server)`,
    );
  const files: Record<string, string> = {};
  for (const name of fs.readdirSync(configDir).sort()) {
    if (name.endsWith(".json") && fs.statSync(path.join(configDir, name)).isFile())
      files[name] = fs.readFileSync(path.join(configDir, name), "utf8");
  }
  return files;
}

const yesNo = (b: boolean) => (b ? "yes" : "no");

export function registerOpsCommands(program: Command): void {
  program
    .command("go")
    .description("run a workflow for a target agent and a task, and watch it (operator)")
    .argument("<agent>", "an agent id (.catcafe/agents.json or the project's agents) or a role: coder, reviewer, tester, planner, executor")
    .argument("[task...]", "what to do (or --file)")
    .option("-p, --project <id>", "project id (default: CATCAFE_PROJECT, or the only project)")
    .option("-w, --workflow <id>", "workflow (default: the project's if the agent plays a part in it; planner and executor run planning)")
    .addOption(modeOption())
    .option("-t, --title <title>", "title (default: the task's first line)")
    .option("-f, --file <file>", "read the task from a file (`-`: stdin)")
    .option("--no-watch", "start it and return (with --json: one document instead of a stream of lines)")
    .option("--wait-for-confirm", "keep watching when the run waits for an operator's confirm")
    .addHelpText(
      "after",
      examples([
        'catcafe go coder "Fix slugify() so the tests pass" --project demo --mode implementation',
        "catcafe go planner -p my-service -f epic.md",
        'catcafe go coder-sim "Fix slugify()" -p demo --no-watch --json',
      ]),
    )
    .action(
      async (
        agent: string,
        words: string[],
        options: {
          project?: string;
          workflow?: string;
          mode?: string;
          title?: string;
          file?: string;
          watch: boolean;
          waitForConfirm?: boolean;
        },
        command: Command,
      ) => {
        const ctx = CliContext.of(command);
        const client = ctx.client();
        const prompt = await textFrom(words, options.file, "task");
        const projectId = await resolveProject(client, options.project);
        const started = await client.ops.go.mutate({
          projectId,
          agent,
          prompt,
          workflow: options.workflow,
          mode: options.mode,
          title: options.title,
        });
        const line = `Started ${started.sessionId}: ${started.agentId} as ${started.role} in ${started.workflow} (${started.mode} mode) on ${projectId}.`;
        if (!options.watch) {
          ctx.out.result(started, () => line);
          return;
        }
        // Watching, --json is a stream: the start, then the watch's lines.
        ctx.out.stream({ type: "started", ...started }, line);
        process.exitCode = await watchSession(ctx, started.sessionId, { stopWhenWaiting: !options.waitForConfirm });
      },
    );

  const config = program.command("config").description("the settings in force, and project configuration (.catcafe/)");
  registerConfigShow(config);
  config
    .command("validate")
    .description(
      "validate .catcafe/ of a local checkout (sent to the server, checked with its settings) or of a project on the server; exit 1 on errors",
    )
    .argument("[dir]", "the checkout to validate (default: the current directory)")
    .option("-p, --project <id>", "validate this project's repository on the server instead")
    .addHelpText(
      "after",
      examples(["catcafe config validate", "catcafe config validate ../my-service", "catcafe config validate --project demo --json"]),
    )
    .action(async (dir: string | undefined, options: { project?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      if (dir !== undefined && options.project) throw new CliError("give a directory or --project, not both", { code: "USAGE" });
      const input = options.project ? { projectId: options.project } : { files: readLocalConfig(dir ?? ".") };
      const result = await ctx.client().ops.validateConfig.mutate(input);
      ctx.out.result(result, () =>
        !result.found
          ? `${result.source}: no ${CONFIG_DIR}/ (the project record's agents run)`
          : result.ok
            ? `${result.source}: valid`
            : [`${result.source}: ${result.errors.length} error(s)`, ...result.errors.map((e) => `  ${e}`)],
      );
      if (!result.ok) process.exitCode = EXIT.FAILED;
    });

  program
    .command("shells")
    .description("agent CLIs on the server")
    .command("detect", { isDefault: true })
    .description("find claude, codex and gemini on the server: path, version, supported range, capabilities (admin)")
    .addOption(new Option("-s, --shell <name...>", "only these").choices([...SHELLS]))
    .option("-p, --project <id>", "also the shells this project's .catcafe/shells.json runs with their own command")
    .addHelpText(
      "after",
      examples(["catcafe shells detect", "catcafe shells detect --shell claude --json", "catcafe shells detect --project my-service"]),
    )
    .action(async (options: { shell?: Array<(typeof SHELLS)[number]>; project?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      ctx.out.progress(`probing ${(options.shell ?? SHELLS).join(", ")} on the server (--version, --help)…`);
      const shells = await ctx
        .client()
        .ops.detectShells.query({ shells: options.shell, ...(options.project ? { projectId: options.project } : {}) });
      ctx.out.result(shells, () => [
        ...table(
          ["SHELL", "VERSION", "RANGE", "SUPPORTED", "HEADLESS", "EDITS", "CWD", "PATH"],
          shells.map((s) => [
            "shellId" in s && s.shellId ? `${s.shellId} (${s.shell})` : s.shell,
            s.version ?? "-",
            s.requiredRange,
            yesNo(s.supported),
            yesNo(s.capabilities.nonInteractive),
            yesNo(s.capabilities.editFiles),
            yesNo(s.capabilities.workingDirectory),
            s.path ?? "not found",
          ]),
        ),
        ...shells.flatMap((s) => s.problems.map((p) => `  ${s.shell}: ${p}`)),
      ]);
    });

  program
    .command("brains")
    .description("model endpoints (brains)")
    .command("check", { isDefault: true })
    .description("check each brain of a project: reachable, key accepted, model known, rate limit (admin); exit 1 if one fails")
    .argument("[brain...]", "only these (ids from brains.json, or role:<role> for the project's own agents)")
    .option("-p, --project <id>", "project id (default: CATCAFE_PROJECT, or the only project)")
    .addHelpText(
      "after",
      examples(["catcafe brains check --project my-service", "catcafe brains check gpt-5 local-llama -p my-service --json"]),
    )
    .action(async (brains: string[], options: { project?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      const projectId = await resolveProject(client, options.project);
      ctx.out.progress(`checking the brains of ${projectId}…`);
      const results = await client.ops.checkBrains.mutate({ projectId, brains: brains.length ? brains : undefined });
      ctx.out.result(results, () =>
        results.length
          ? table(
              ["BRAIN", "PROVIDER", "MODEL", "OK", "MESSAGE"],
              results.map((r) => [r.brain, r.provider, r.model, yesNo(r.ok), r.message]),
            )
          : `${projectId} uses no brains.`,
      );
      if (results.some((r) => !r.ok)) process.exitCode = EXIT.FAILED;
    });

  program
    .command("runners")
    .description("runner processes")
    .command("list", { isDefault: true })
    .description(
      "runners heard from in the last day, whether each is live, whether it runs agents sandboxed, its labels and the projects it cannot serve",
    )
    .addHelpText("after", examples(["catcafe runners list", "catcafe runners list --json"]))
    .action(async (_options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const runners = await ctx.client().runners.list.query();
      ctx.out.result(runners, () =>
        runners.length
          ? table(
              ["ID", "HOST", "PID", "VERSION", "LIVE", "STARTED", "HEARTBEAT", "LABELS", "CANNOT SERVE", "SANDBOX"],
              runners.map((r) => [
                r.id,
                r.host,
                r.pid === null ? "—" : String(r.pid),
                r.version,
                yesNo(r.live),
                shortTime(r.startedAt),
                shortTime(r.heartbeatAt),
                r.labels.length ? r.labels.join(",") : "—",
                // "—": not reported; each project with why (operators see the paths).
                r.unservedProjects === null
                  ? "—"
                  : r.unservedProjects.length
                    ? r.unservedProjects.map((u) => (u.reason ? `${u.projectId}: ${u.reason}` : u.projectId)).join("; ")
                    : "none",
                // Last, as off says why (docs/operations.md, "The sandbox"); "—": the runner did not report it.
                r.sandbox === null ? "—" : r.sandbox.on ? "on" : `off: ${r.sandbox.reason ?? "no reason given"}`,
              ]),
            )
          : "No runners: start one with `npm run runner`.",
      );
    });

  program
    .command("projections")
    .description("read models")
    .command("rebuild")
    .description("rebuild every read model from the event log and report the tables that changed (admin)")
    .addHelpText("after", examples(["catcafe projections rebuild", "catcafe projections rebuild --json"]))
    .action(async (_options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      ctx.out.progress("rebuilding the read models from the event log (appends wait meanwhile)…");
      const report = await ctx.client().ops.rebuildProjections.mutate();
      ctx.out.result(report, () => [
        `Rebuilt ${report.tables.join(", ")} from ${report.events} events in ${report.durationMs} ms.`,
        report.changedTables.length
          ? `Changed (they had drifted from the log): ${report.changedTables.join(", ")}`
          : "Nothing changed: the read models matched the log.",
      ]);
    });
}
