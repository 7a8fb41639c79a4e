// What a runner can run, judged without a database: CATCAFE_RUNNER_LABELS parsed, the CLIs a
// detection found supported, and the message a step no live runner can run fails with
// (server/runner/unrunnable.ts; docs/scaling.md, "Which runner runs a step").
import { describe, expect, it } from "vitest";
import { parseEnv, ZRunnerEnv } from "../../server/env";
import { supportedClis } from "../../server/runner/capabilities";
import { runnerLacks, unrunnableMessage, type LiveRunnerCapabilities, type StepNeeds } from "../../server/runner/unrunnable";

const step = (needs: Partial<StepNeeds> = {}): StepNeeds => ({
  id: "00000000-0000-4000-8000-000000000001",
  sessionId: "s-1",
  attempt: 1,
  needsRepo: "/srv/app",
  needsCli: null,
  needsLabels: [],
  excludedRunners: [],
  ...needs,
});
const runner = (id: string, caps: Partial<LiveRunnerCapabilities> = {}): LiveRunnerCapabilities => ({
  id,
  host: `host-${id}`,
  servedRepos: ["/srv/app"],
  unserved: [],
  agentClis: null,
  labels: [],
  ...caps,
});

describe("CATCAFE_RUNNER_LABELS", () => {
  const env = (labels?: string) => parseEnv(ZRunnerEnv, { DATABASE_URL: "postgres://x", CATCAFE_RUNNER_LABELS: labels });
  it("is a comma-separated list, trimmed, without repeats; none by default", () => {
    expect(env().CATCAFE_RUNNER_LABELS).toEqual([]);
    expect(env(" gpu, linux,,gpu ").CATCAFE_RUNNER_LABELS).toEqual(["gpu", "linux"]);
  });
  it("refuses a label with other characters, naming the variable", () => {
    expect(() => env("gpu,big box")).toThrow(/CATCAFE_RUNNER_LABELS.*labels use letters, digits/);
  });
});

describe("the agent CLIs a runner can run", () => {
  it("are the detected shells marked supported, nothing else", () => {
    expect(
      supportedClis([
        { shell: "claude", supported: true },
        { shell: "codex", supported: false },
        { shell: "gemini", supported: true },
      ]),
    ).toEqual(["claude", "gemini"]);
    expect(supportedClis(null)).toEqual([]);
    expect(supportedClis([{ supported: true }])).toEqual([]);
  });
});

describe("a step no live runner can run", () => {
  it("is runnable while one live runner has all it needs, unknown capabilities counting as any", () => {
    expect(unrunnableMessage(step(), [runner("a", { servedRepos: [] }), runner("b")], new Map())).toBeNull();
    expect(unrunnableMessage(step({ needsCli: "claude" }), [runner("a", { servedRepos: null, agentClis: null })], new Map())).toBeNull();
  });
  it("waits (no message) while no runner is live at all", () => {
    expect(unrunnableMessage(step(), [], new Map())).toBeNull();
  });
  it("names each live runner, its host and what it lacks: the clone with why, the CLI, the labels, and what a runner that released it said", () => {
    const message = unrunnableMessage(
      step({ needsCli: "codex", needsLabels: ["gpu", "linux"], excludedRunners: ["c"] }),
      [
        runner("a", { servedRepos: [], unserved: [{ projectId: "app", repoPath: "/srv/app", reason: "no clone at /x" }] }),
        runner("b", { agentClis: ["claude"], labels: ["linux"] }),
        runner("c", { agentClis: ["codex"], labels: ["gpu", "linux"] }),
      ],
      new Map([["c", "base commit abc is not in /home/c/app"]]),
    );
    expect(message).toBe(
      "no live runner can run this step (" +
        "runner a on host-a: no clone of /srv/app: no clone at /x; lacks the labels gpu, linux; " +
        "runner b on host-b: no supported codex CLI; lacks the label gpu; " +
        "runner c on host-c released it: base commit abc is not in /home/c/app)",
    );
  });
  it("says what one runner lacks, or nothing when it lacks nothing", () => {
    expect(runnerLacks(step({ needsRepo: null }), runner("a", { servedRepos: [] }))).toBeNull();
    expect(runnerLacks(step(), runner("a", { servedRepos: ["/srv/other"] }))).toBe("no clone of /srv/app");
  });
});
