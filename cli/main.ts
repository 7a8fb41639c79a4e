// The `catcafe` command line (README.md, "CLI"), built on the typed client in lib/client.
// Every command takes --json (a result scripts can parse on stdout; errors as JSON on
// stderr) and exits non-zero on failure: 1 failed, 2 bad command line, 3 a watched session
// ended without success.
import fs from "node:fs";
import path from "node:path";
import { Command, CommanderError } from "commander";
import { registerAgentsCommands } from "./commands/agents";
import { registerAttentionCommands } from "./commands/attention";
import { registerChatCommands } from "./commands/chat";
import { registerBakeOffCommands } from "./commands/bake-off";
import { registerDeliverCommand } from "./commands/deliver";
import { registerMcpCommand } from "./commands/mcp";
import { registerForgeCommands } from "./commands/forge";
import { registerIntakeCommands } from "./commands/intake";
import { registerProjectCommands } from "./commands/projects";
import { registerAuthCommands } from "./commands/auth";
import { examples } from "./commands/help";
import { registerOpsCommands } from "./commands/ops";
import { registerSessionCommands } from "./commands/sessions";
import { registerTaskCommands } from "./commands/tasks";
import { registerTokenCommands } from "./commands/tokens";
import { registerUsageCommand } from "./commands/usage";
import { registerUserCommands } from "./commands/users";
import { registerWatchCommand } from "./commands/watch";
import { EXIT, exitCodeOf, formatReport, reportOf } from "./errors";
import { Output } from "./output";

function packageVersion(): string {
  const file = path.join(import.meta.dirname, "..", "package.json");
  return (JSON.parse(fs.readFileSync(file, "utf8")) as { version: string }).version;
}

const MORE_HELP = `${examples([
  "catcafe login --url http://localhost:3000 --email admin@example.com",
  'catcafe task start --project demo "Fix slugify() so the tests pass" --watch',
  "catcafe task confirm s-1a2b3c4d5e6f --watch",
  'catcafe forge new --project demo "A command-line word counter"',
  "catcafe sessions list --state approved --json",
  "catcafe export s-1a2b3c4d5e6f --out ./export",
  "catcafe users invite --role operator --email ada@example.com",
])}
Environment:
  CATCAFE_URL       server URL (instead of the saved one)
  CATCAFE_TOKEN     API token (instead of the saved one; for CI)
  CATCAFE_PROJECT   default --project
  CATCAFE_CONFIG    config file (default: $XDG_CONFIG_HOME/catcafe/config.json or ~/.config/catcafe/config.json)
  CATCAFE_PASSWORD  password for login / token create (prefer --password-stdin)

Exit codes: 0 ok, 1 failed, 2 bad command line, 3 a watched session ended without success.
`;

export function buildProgram(): Command {
  const program = new Command("catcafe")
    .description("Drive Cat Cafe from the terminal: start and confirm tasks, watch and export sessions, manage tokens and the team.")
    .version(packageVersion(), "-V, --version")
    .option("--json", "machine-readable output: JSON on stdout, errors as JSON on stderr")
    .option("--url <url>", "server URL (default: CATCAFE_URL, the saved one, or http://localhost:3000)")
    .option("-q, --quiet", "no progress notes on stderr")
    // Inherited by every command added below.
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .showHelpAfterError("(run with --help for usage and examples)")
    .exitOverride()
    .addHelpText("after", MORE_HELP);
  registerAuthCommands(program);
  registerTokenCommands(program);
  registerUserCommands(program);
  registerTaskCommands(program);
  registerForgeCommands(program);
  registerChatCommands(program);
  registerDeliverCommand(program);
  registerBakeOffCommands(program);
  registerMcpCommand(program);
  registerSessionCommands(program);
  registerAttentionCommands(program);
  registerUsageCommand(program);
  registerAgentsCommands(program);
  registerProjectCommands(program);
  registerIntakeCommands(program);
  registerWatchCommand(program);
  registerOpsCommands(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.OK;
  } catch (err) {
    // Commander has already printed its message (or the help / version).
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    const out = new Output(argv.includes("--json"), false);
    const report = reportOf(err);
    out.error(formatReport(report), { error: report });
    return exitCodeOf(err);
  }
}

process.exitCode = await main(process.argv);
