// Gemini CLI (@google/gemini-cli, pinned in package.json) through the gemini adapter: the
// real CLI, pointed at a local Gemini API stub (streamGenerateContent) by
// GOOGLE_GEMINI_BASE_URL, with the run's own settings.json selecting API-key auth (see
// server/agents/shells/gemini.ts for why). No recordings needed.
import { describeShellWithStub } from "../helpers/shell-suite";

describeShellWithStub({
  kind: "gemini",
  api: "gemini",
  model: "gemini-2.5-flash",
  keyFrom: (req) => req.headers["x-goog-api-key"] as string | undefined,
  writeFile: (_workspace, file, content) => ({ name: "write_file", input: { file_path: file, content } }),
  runCommand: (command) => ({ name: "run_shell_command", input: { command, description: "Wait for the test" } }),
  commandPermissions: "full",
  // Gemini reports a shell command that exits non-zero as a tool that succeeded; a missing file it reports as failed.
  failingTool: { name: "read_file", input: { file_path: "catcafe-no-such-file" } },
  streamsDeltas: true,
  // Gemini CLI 0.61 retries a request that failed (reset, 429, 5xx: after 5 s and more, or the
  // wait the provider asked), not a stream that broke after it began.
  reportsRetryDelay: true,
  retriesBrokenStream: false,
});
