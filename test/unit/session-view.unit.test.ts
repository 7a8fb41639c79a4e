// The session view's pure parts: how events become entries (failures with their class and
// one line of diagnosis, nothing from step inputs), and how a unified diff is read.
import { describe, expect, it } from "vitest";
import { parseUnifiedDiff } from "../../components/session/parse-diff";
import { appRegistry } from "../../server/events/catalog";
import type { RecordedEvent } from "../../server/events/types";
import { oneLine, toSessionEntry } from "../../server/sessions/view/entries";
import { foldProgress, statusOf } from "../../server/sessions/view/progress";

let version = 0;
function event(type: string, data: unknown, actor = { kind: "runner" as const, id: "r-1" }): RecordedEvent {
  version++;
  return {
    position: version,
    txId: 1,
    eventId: `e-${version}`,
    streamId: "s-1",
    version,
    type,
    data,
    metadata: { actor, correlationId: "c", causationId: null, schemaVersion: 1 },
    recordedAt: `2026-01-01T00:00:${String(version).padStart(2, "0")}.000Z`,
  };
}
const entry = (type: string, data: unknown) => toSessionEntry(event(type, data), (t, d) => appRegistry.summarize(t, d));
const STEP = "7d0b7a5e-8f0e-4a55-9a39-4d0f8f5a8b01";

describe("toSessionEntry", () => {
  it("gives a failed step its class and only the first line of its message", () => {
    const e = entry("StepFailed", {
      stepId: STEP,
      attempt: 2,
      errorClass: "provider_network_error",
      message: "socket hang up\n    at TLSSocket.onclose",
      retryAt: null,
    });
    expect(e.failure).toEqual({ errorClass: "provider_network_error", diagnosis: "socket hang up" });
  });

  it("classifies failed and refused test commands, with the exit codes and the last line of output", () => {
    const base = {
      stepId: STEP,
      index: 0,
      argv: ["node", "--test"],
      expectedExitCode: 0,
      durationMs: 10,
      stdoutTail: "# pass 4\n# fail 1\n",
      stderrTail: "",
      reason: null,
    };
    expect(entry("TestCommandRecorded", { ...base, status: "ran", passed: false, exitCode: 1, errorClass: null }).failure).toEqual({
      errorClass: "command_failed",
      diagnosis: "exit 1, expected 0 — # fail 1",
    });
    expect(
      entry("TestCommandRecorded", {
        ...base,
        status: "refused",
        passed: false,
        exitCode: null,
        errorClass: "command_refused",
        reason: "a server",
      }).failure,
    ).toEqual({ errorClass: "command_refused", diagnosis: "refused: a server" });
    expect(entry("TestCommandRecorded", { ...base, status: "ran", passed: true, exitCode: 0, errorClass: null }).failure).toBeNull();
    const tap = "ok 1 - trims\nnot ok 2 - accents keep their base letter\n  ---\n  duration_ms: 1.2\n# fail 1\n# duration_ms 40\n";
    expect(
      entry("TestCommandRecorded", { ...base, stdoutTail: tap, status: "ran", passed: false, exitCode: 1, errorClass: null }).failure
        ?.diagnosis,
    ).toBe("exit 1, expected 0 — not ok 2 - accents keep their base letter");
  });

  it("keeps a step's input (prompt, agent configuration, repository path) out of the entry", () => {
    const e = entry("StepScheduled", {
      stepId: STEP,
      kind: "agent",
      input: {
        role: "coder",
        state: "building",
        phase: "build",
        prompt: "secret prompt",
        agent: { apiKeyEnv: "X" },
        workspace: { repoPath: "/srv/repo" },
      },
      timeoutMs: 1000,
      maxAttempts: 3,
    });
    expect(e.detail).toEqual({
      kind: "step_scheduled",
      stepId: STEP,
      stepKind: "agent",
      role: "coder",
      state: "building",
      phase: "build",
      maxAttempts: 3,
      timeoutMs: 1000,
    });
    expect(JSON.stringify(e)).not.toMatch(/secret prompt|repoPath|apiKeyEnv/);
  });

  it("reads a streamed-output event defensively (it may not exist yet)", () => {
    const e = toSessionEntry(event("AgentOutputStreamed", { stepId: STEP, text: "Hel" }), () => "streamed");
    expect(e.detail).toEqual({ kind: "agent_streamed", stepId: STEP, text: "Hel" });
  });

  it("oneLine takes the first non-empty line and shortens it", () => {
    expect(oneLine("\n\n  first  \nsecond")).toBe("first");
    expect(oneLine("x".repeat(300), 10)).toBe(`${"x".repeat(9)}…`);
  });
});

describe("session progress", () => {
  it("knows who works on which step since when, and forgets it when the state moves on", () => {
    const scheduled = event("StepScheduled", {
      stepId: STEP,
      kind: "agent",
      input: { role: "reviewer", state: "reviewing" },
      timeoutMs: 1000,
      maxAttempts: 3,
    });
    const started = event("StepStarted", { stepId: STEP, attempt: 1, runnerId: "r-1", leaseExpiresAt: "2026-01-01T00:01:00.000Z" });
    const during = statusOf(foldProgress([scheduled, started]), "x");
    expect(during.step).toMatchObject({
      id: STEP,
      role: "reviewer",
      state: "reviewing",
      startedAt: started.recordedAt,
      attempt: 1,
      runnerId: "r-1",
    });
    const after = statusOf(foldProgress([scheduled, started, event("SessionStateChanged", { from: "reviewing", to: "testing" })]), "x");
    expect(after).toMatchObject({ state: "testing", step: null });
  });
});

describe("parseUnifiedDiff", () => {
  it("splits files, numbers lines and counts additions and deletions", () => {
    const diff = [
      "diff --git a/src/sum.js b/src/sum.js",
      "index 1111111..2222222 100644",
      "--- a/src/sum.js",
      "+++ b/src/sum.js",
      "@@ -1,3 +1,3 @@",
      " function sum(a, b) {",
      "-  return a - b;",
      "+  return a + b;",
      " }",
      "diff --git a/NEW.md b/NEW.md",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/NEW.md",
      "@@ -0,0 +1 @@",
      "+hello",
      "",
    ].join("\n");
    const files = parseUnifiedDiff(diff);
    expect(files.map((f) => [f.path, f.status, f.additions, f.deletions])).toEqual([
      ["src/sum.js", "modified", 1, 1],
      ["NEW.md", "added", 1, 0],
    ]);
    expect(files[0]!.lines.map((l) => [l.kind, l.oldNo, l.newNo])).toEqual([
      ["hunk", null, null],
      ["context", 1, 1],
      ["del", 2, null],
      ["add", null, 2],
      ["context", 3, 3],
    ]);
  });
});
