// Claude Code (@anthropic-ai/claude-code, pinned in package.json) through the claude
// adapter: the real binary, pointed at a local Anthropic Messages API stub by
// ANTHROPIC_BASE_URL. No recordings needed: everything runs for real.
import path from "node:path";
import { describeShellWithStub } from "../helpers/shell-suite";

describeShellWithStub({
  kind: "claude",
  api: "anthropic",
  model: "claude-sonnet-4-5",
  keyFrom: (req) => req.headers["x-api-key"] as string | undefined,
  // Claude Code's Write tool takes an absolute path.
  writeFile: (workspace, file, content) => ({ name: "Write", input: { file_path: path.join(workspace, file), content } }),
  runCommand: (command) => ({ name: "Bash", input: { command, description: "Wait for the test" } }),
  commandPermissions: "full",
  streamsDeltas: true,
  reportsRetryDelay: true,
  retriesBrokenStream: true,
});
