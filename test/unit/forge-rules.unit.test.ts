// The Forge rules checked by code (req F3, F11), the anti-loop (F8, F12) and the stage
// path rules, each on the smallest input that shows it.
import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS as A, parseArtifact } from "../../server/forge/artifacts";
import { judgeLoop, pathAllowed, similarity } from "../../server/forge/loop";
import { cascadeFeatureStatus, codingRules, designRules, findCycle, planRules, prdRules } from "../../server/forge/rules";

const req = (n: number, title = "Count words") =>
  Array.from({ length: n }, (_, i) => ({ id: `R${i + 1}`, title: `${title} ${i + 1}`, description: "as the idea says" }));
const feat = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `F${i + 1}`, name: `F${i + 1}`, description: "d", requirements: [], status: "pending" }));
const task = (id: string, feature: string, dependsOn: string[] = [], title = `Build ${id}`) => ({
  id,
  title,
  feature,
  dependsOn,
  status: "pending" as const,
});
const ids = (findings: Array<{ id: string }>) => findings.map((f) => f.id);

describe("PRD rules", () => {
  it("3 to 6 core requirements, 2 to 4 core features", () => {
    expect(ids(prdRules({ idea: "", json: { [A.requirements]: { requirements: req(7) }, [A.features]: { features: feat(2) } } }))).toEqual([
      "rule:prd.requirements-count",
    ]);
    expect(prdRules({ idea: "", json: { [A.requirements]: { requirements: req(7) } } })[0]!.message).toBe(
      "the PRD has 7 core requirements; the rule is 3 to 6",
    );
    expect(ids(prdRules({ idea: "", json: { [A.requirements]: { requirements: req(2) }, [A.features]: { features: feat(5) } } }))).toEqual([
      "rule:prd.requirements-count",
      "rule:prd.features-count",
    ]);
    expect(prdRules({ idea: "", json: { [A.requirements]: { requirements: req(3) }, [A.features]: { features: feat(4) } } })).toEqual([]);
  });

  it("no performance, CI or monitoring requirement unless the idea asks", () => {
    const requirements = [...req(3), { id: "R9", title: "Monitoring", description: "alerting on errors" }];
    expect(ids(prdRules({ idea: "a word counter", json: { [A.requirements]: { requirements } } }))).toEqual(["rule:prd.non-core.R9"]);
    expect(prdRules({ idea: "a word counter with monitoring of its use", json: { [A.requirements]: { requirements } } })).toEqual([]);
    const perf = [...req(3), { id: "R8", title: "Fast", description: "latency under 10 ms" }];
    expect(ids(prdRules({ idea: "", json: { [A.requirements]: { requirements: perf } } }))).toEqual(["rule:prd.non-core.R8"]);
  });

  it("requirements.json and features.json are checked by their schemas", () => {
    expect(parseArtifact(A.requirements, "{").problems[0]).toMatch(/not valid JSON/);
    expect(parseArtifact(A.requirements, JSON.stringify({ requirements: [{ id: "R1" }] })).problems).toEqual([
      ".forge/requirements.json: requirements.0.title: Invalid input: expected string, received undefined",
      ".forge/requirements.json: requirements.0.description: Invalid input: expected string, received undefined",
    ]);
    expect(parseArtifact(A.prd, "").problems).toEqual([".forge/prd.md is empty"]);
  });
});

describe("design rules", () => {
  const component = (id: string, name: string, justification?: string) => ({
    id,
    name,
    responsibility: "r",
    ...(justification ? { justification } : {}),
  });
  it("2 to 4 components; no microservice, cache or queue without a justification", () => {
    expect(ids(designRules({ idea: "", json: { [A.designSpec]: { components: [component("a", "App")] } } }))).toEqual([
      "rule:design.components-count",
    ]);
    expect(
      ids(
        designRules({
          idea: "",
          json: {
            [A.designSpec]: {
              components: [component("a", "App"), component("c", "Redis cache"), component("q", "Job queue", "jobs outlive requests")],
            },
          },
        }),
      ),
    ).toEqual(["rule:design.heavy-component.c"]);
  });
});

describe("plan rules", () => {
  const features = { features: feat(2) };
  it("5 to 12 tasks with dependencies, every feature covered, no test or deploy task", () => {
    const plan = {
      tasks: [
        task("T1", "F1"),
        task("T2", "F1", ["T1"]),
        task("T3", "F1", ["T2"]),
        task("T4", "F1", ["T3"]),
        task("T5", "F1", ["T4"], "Deploy to production"),
      ],
    };
    expect(ids(planRules({ idea: "", json: { [A.plan]: plan, [A.features]: features } }))).toEqual([
      "rule:plan.test-or-deploy.T5",
      "rule:plan.coverage",
    ]);
    expect(ids(planRules({ idea: "", json: { [A.plan]: { tasks: plan.tasks.slice(0, 4) } } }))).toEqual(["rule:plan.tasks-count"]);
  });

  it("a plan with a cycle names the cycle (depth-first search)", () => {
    const plan = {
      tasks: [task("T1", "F1"), task("T2", "F2", ["T4"]), task("T3", "F1", ["T2"]), task("T4", "F2", ["T3"]), task("T5", "F2", ["T1"])],
    };
    const findings = planRules({ idea: "", json: { [A.plan]: plan, [A.features]: features } });
    expect(findings).toEqual([{ id: "rule:plan.cycle", message: "the tasks' dependencies form a cycle: T2 → T4 → T3 → T2" }]);
    expect(findCycle([{ id: "a", dependsOn: ["a"] }])).toEqual(["a", "a"]);
    expect(
      findCycle([
        { id: "a", dependsOn: ["b"] },
        { id: "b", dependsOn: [] },
      ]),
    ).toBeNull();
  });

  it("task status changes cascade to their feature", () => {
    const plan = { tasks: [task("T1", "F1"), task("T2", "F1"), task("T3", "F2")] };
    expect(cascadeFeatureStatus(plan, [{ id: "T1", status: "done" }])).toEqual([
      { id: "F1", status: "in_progress", tasks: 2, done: 1 },
      { id: "F2", status: "pending", tasks: 1, done: 0 },
    ]);
    expect(
      cascadeFeatureStatus(
        plan,
        ["T1", "T2", "T3"].map((id) => ({ id, status: "done" as const })),
      ),
    ).toEqual([
      { id: "F1", status: "done", tasks: 2, done: 2 },
      { id: "F2", status: "done", tasks: 1, done: 1 },
    ]);
  });
});

describe("coding rules", () => {
  it("no tests unless the PRD asks; every planned task done", () => {
    const plan = { tasks: [task("T1", "F1")] };
    expect(
      ids(
        codingRules({
          idea: "",
          json: { [A.plan]: plan, [A.codeMetadata]: { files: [], tasks: [], checks: [] } },
          changedFiles: ["src/a.test.js"],
        }),
      ),
    ).toEqual(["rule:coding.unasked-tests", "rule:coding.open-tasks"]);
    const asks = { requirements: [{ id: "R1", title: "Unit tests", description: "tests of the counting" }] };
    expect(
      codingRules({
        idea: "",
        json: {
          [A.requirements]: asks,
          [A.plan]: plan,
          [A.codeMetadata]: { files: [], tasks: [{ id: "T1", status: "done" }], checks: [] },
        },
        changedFiles: ["test/a.test.js"],
      }),
    ).toEqual([]);
  });
});

describe("the anti-loop", () => {
  const c = (blocking: string[], text = blocking.join(" ")) => ({ blocking, text });
  it("A → B → A: the returning finding escalates at the third critique although the texts differ", () => {
    const verdict = judgeLoop([
      c(["a"], "The scope is too wide."),
      c(["b"], "Error handling is missing entirely."),
      c(["a"], "The scope is too wide."),
    ]);
    expect(verdict.reopened).toEqual(["a"]);
    expect(verdict.escalate).toMatch(/came back/);
    expect(verdict.similarity!).toBeLessThan(0.8);
  });

  it("the same issue: a warning at the second critique, a stop at the third", () => {
    expect(judgeLoop([c(["x"]), c(["x"])])).toMatchObject({ warning: expect.stringContaining("x"), escalate: null });
    const worded = ["The count is off by one.", "Empty files crash the parser now.", "Unicode input is split wrongly."];
    expect(judgeLoop(worded.map((t) => c(["x"], t))).escalate).toMatch(/same issue/);
  });

  it("three critiques more than 80 % alike stop; a shrinking blocking set does not", () => {
    const t = "The PRD is too long and lists features nobody asked for.";
    expect(judgeLoop([c(["a"], t), c(["b"], `${t}!`), c(["c"], `${t}!!`)]).escalate).toMatch(/alike/);
    expect(judgeLoop([c(["a", "b", "c"], "one"), c(["d", "e"], "two things"), c(["f"], "something else entirely")]).escalate).toBeNull();
    expect(similarity("abc", "abc")).toBe(1);
    expect(similarity("abc", "xyz")).toBe(0);
  });
});

describe("stage paths", () => {
  it("gitignore-style: the last matching pattern wins, `!` excludes", () => {
    const coding = ["**", "!.forge/**", ".forge/code_metadata.json"];
    expect(pathAllowed("src/a.js", coding)).toBe(true);
    expect(pathAllowed(".forge/prd.md", coding)).toBe(false);
    expect(pathAllowed(".forge/code_metadata.json", coding)).toBe(true);
    expect(pathAllowed("src/a.js", [".forge/prd.md"])).toBe(false);
    expect(pathAllowed(".forge/prd.md", [".forge/prd.md"])).toBe(true);
    expect(pathAllowed("anything", [])).toBe(false);
  });
});
