// Task sessions for the read-side measurements: a long review-loop session (rounds of
// streamed output, builds, commits, verdicts, test results and operator messages) and many
// short task sessions across projects and starters. Step lifecycle events are left out: the
// steps projection fences them to runners holding a claim, and they add nothing to what the
// timeline, replay and dashboard read.
import crypto from "node:crypto";
import type { Actor } from "../../server/events/catalog";
import type { EventStore } from "../../server/events/store";
import type { NewEvent } from "../../server/events/types";

const fakeBlob = (seed: string) => ({
  blob: crypto.createHash("sha256").update(seed).digest("hex"),
  size: 4096,
  mediaType: "text/plain; charset=utf-8",
});
const prose = (words: number, salt: string) =>
  Array.from({ length: words }, (_, i) => ["the", "slug", "keeps", "accents", "tests", "pass", "review", "finding", salt][i % 9]).join(" ");

export function taskStartedData(projectId: string, prompt: string, mode: "proposal" | "implementation" = "implementation") {
  return {
    workflow: "review_loop",
    workflowVersion: 1,
    mode,
    prompt,
    maxIterations: 3,
    project: {
      id: projectId,
      name: `Project ${projectId}`,
      repoPath: `/repos/${projectId}`,
      baseCommit: "0".repeat(40),
      allowlist: [["node", "--test", "**"]],
    },
    agents: {},
  };
}

/** One review round: build (streamed), commit, review (streamed), verdict, tests, back to building. */
export function reviewRound(n: number): NewEvent[] {
  const build = crypto.randomUUID();
  const review = crypto.randomUUID();
  const test = crypto.randomUUID();
  const streamed = (stepId: string, role: string, count: number): NewEvent[] =>
    Array.from({ length: count }, (_, seq) => ({
      type: "AgentOutputStreamed",
      data: { stepId, attempt: 1, role, seq, text: prose(40, `r${n}s${seq}`) },
    }));
  return [
    {
      type: "SessionStateChanged",
      data: { from: n === 1 ? "start" : "running_tests", to: "building", reason: n === 1 ? "start" : "test_failed" },
    },
    ...(n > 1 ? [{ type: "IterationStarted", data: { iteration: n, reason: "test_failed" } }] : []),
    ...streamed(build, "coder", 6),
    {
      type: "AgentOutputRecorded",
      data: {
        stepId: build,
        attempt: 1,
        role: "coder",
        agentId: "coder-sim",
        phase: "build",
        raw: fakeBlob(`b${n}`),
        preview: prose(300, `build${n}`).slice(0, 2000),
        parsed: null,
        validationErrors: [],
        simulated: true,
      },
    },
    {
      type: "WorkspaceCommitted",
      data: {
        stepId: build,
        commit: crypto.randomBytes(20).toString("hex"),
        parent: crypto.randomBytes(20).toString("hex"),
        empty: false,
        changedFiles: [{ path: "src/slugify.js", status: "modified" }],
        diff: fakeBlob(`d${n}`),
      },
    },
    { type: "SessionStateChanged", data: { from: "building", to: "reviewing", reason: "done" } },
    ...streamed(review, "reviewer", 3),
    {
      type: "AgentOutputRecorded",
      data: {
        stepId: review,
        attempt: 1,
        role: "reviewer",
        agentId: "reviewer-sim",
        phase: "verdict",
        raw: fakeBlob(`v${n}`),
        preview: '{"decision":"approve","summary":"ok","findings":[]}',
        parsed: { decision: "approve", summary: "ok", findings: [] },
        validationErrors: [],
        simulated: true,
      },
    },
    {
      type: "ReviewVerdictRecorded",
      data: {
        stepId: review,
        decision: "approve",
        modelDecision: "approve",
        override: null,
        summary: "Looks right.",
        findings: [{ severity: "minor", file: "src/slugify.js", line: 3, message: "name the regex" }],
      },
    },
    { type: "SessionStateChanged", data: { from: "reviewing", to: "running_tests", reason: "plan_valid" } },
    {
      type: "TestCommandRecorded",
      data: {
        stepId: test,
        index: 0,
        argv: ["node", "--test", "test/"],
        status: "ran",
        passed: false,
        exitCode: 1,
        expectedExitCode: 0,
        durationMs: 120,
        stdoutTail: "# fail 1",
        stderrTail: "",
        errorClass: "command_failed",
        reason: null,
      },
    },
    ...(n % 4 === 0 ? [{ type: "OperatorMessagePosted", data: { text: `round ${n}: keep going` } }] : []),
  ];
}

/** A task session of exactly `total` events, appended in batches; returns its id. */
export async function longTaskSession(store: EventStore, actor: Actor, total: number): Promise<string> {
  const id = `bench-long-${crypto.randomUUID()}`;
  let version = (
    await store.append(
      id,
      "no_stream",
      [
        { type: "SessionCreated", data: { title: "A long review loop", workflow: "review_loop", state: "start" } },
        { type: "TaskStarted", data: taskStartedData("bench-long", "Fix slugify() for every script") },
      ],
      { actor },
    )
  ).version;
  let pending: NewEvent[] = [];
  for (let n = 1; version + pending.length < total; n++) {
    pending.push(...reviewRound(n));
    if (pending.length >= 400 || version + pending.length >= total) {
      const batch = pending.slice(0, total - version);
      pending = [];
      version = (await store.append(id, version, batch, { actor })).version;
    }
  }
  return id;
}
