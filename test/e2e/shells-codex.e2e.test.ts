// Codex CLI (@openai/codex, pinned in package.json) through the codex adapter: the real
// binary, pointed at a local OpenAI Responses API stub through the adapter's own model
// provider (`-c model_providers.catcafe.base_url=...`). No recordings needed.
//
// Codex specifics these tests pin down: it reports whole agent messages (no text deltas);
// its file edits go through apply_patch (here invoked from exec_command, which Codex turns
// into a file_change event); its commands run in the workspace-write sandbox, each in a
// session of its own, which is why the adapter ends a run by descendants and by its marker
// variable and not only by process group.
import { describeShellWithStub } from "../helpers/shell-suite";

/** An apply_patch invocation that adds `file` with `content` (each line prefixed with "+"). */
function addFilePatch(file: string, content: string): string {
  const lines = content
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => `+${l}`);
  return ["apply_patch <<'PATCH'", "*** Begin Patch", `*** Add File: ${file}`, ...lines, "*** End Patch", "PATCH", ""].join("\n");
}

describeShellWithStub({
  kind: "codex",
  api: "openai",
  model: "gpt-5-codex",
  keyFrom: (req) => (req.headers.authorization as string | undefined)?.replace(/^Bearer /, ""),
  writeFile: (_workspace, file, content) => ({ name: "exec_command", input: { cmd: addFilePatch(file, content) } }),
  runCommand: (command) => ({ name: "exec_command", input: { cmd: command, yield_time_ms: 30_000 } }),
  commandPermissions: "edit",
  streamsDeltas: false,
  reportsRetryDelay: false,
  retriesBrokenStream: true,
});
