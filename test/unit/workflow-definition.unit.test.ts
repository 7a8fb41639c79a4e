// Workflow definitions as data (req M5, M9): both built-ins load, and a corpus of broken
// definitions each fails with the exact path and message a user needs to fix it.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_RUNTIMES } from "../../server/demo/content";
import { BUILTIN_WORKFLOWS } from "../../server/task-engine";
import { checkDefinition, InvalidWorkflowError, loadDefinition, type DefinitionProblem } from "../../server/workflow/definition";
import { mini, type DefinitionJson, type Loose } from "../helpers/workflow-json";

function problemsOf(input: unknown): DefinitionProblem[] {
  try {
    loadDefinition(input);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidWorkflowError);
    return (err as InvalidWorkflowError).problems;
  }
  throw new Error("the definition loaded");
}

const on = (def: DefinitionJson, state: string) => def.states[state]!.on!;

/** The problems of a definition, [] when it loads. */
function problemsOrNone(input: unknown): DefinitionProblem[] {
  try {
    loadDefinition(input);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidWorkflowError);
    return (err as InvalidWorkflowError).problems;
  }
}

describe("built-in workflow definitions", () => {
  it.each(["review_loop", "planning"])("%s loads and passes every static check", (id) => {
    const def = BUILTIN_WORKFLOWS[id]!;
    expect(checkDefinition(def)).toEqual([]);
    expect(loadDefinition(JSON.parse(JSON.stringify(def)))).toEqual(def);
  });

  it("review_loop has the required states, modes and cap", () => {
    const def = BUILTIN_WORKFLOWS.review_loop!;
    expect(def).toMatchObject({
      initial: "start",
      modes: ["proposal", "implementation"],
      maxIterations: 3,
      global: { cancel: "cancelled", step_failed: "failed" },
    });
    expect(Object.keys(def.states).sort()).toEqual(
      [
        "approved",
        "awaiting_operator_confirm",
        "building",
        "cancelled",
        "failed",
        "max_iterations_reached",
        "proposal_coder",
        "proposal_reviewer",
        "proposal_tester",
        "review_schema_invalid",
        "reviewing",
        "running_tests",
        "start",
        "testing",
      ].sort(),
    );
  });

  it("planning has M7's states", () => {
    expect(Object.keys(BUILTIN_WORKFLOWS.planning!.states).sort()).toEqual([
      "cancelled",
      "done",
      "executing",
      "failed",
      "init",
      "planning",
      "running_tests",
      "testing",
    ]);
  });

  it("the mini fixture is valid, and maxIterations defaults to 3", () => {
    expect(loadDefinition(mini()).maxIterations).toBe(3);
  });
});

describe("broken definitions: static checks", () => {
  it("an unknown target state", () => {
    const def = mini();
    on(def, "work").done = [{ target: "chek" }];
    expect(problemsOf(def)).toEqual([
      { path: "states.work.on.done[0].target", message: 'unknown state "chek"' },
      { path: "states.check", message: "unreachable from the initial state" },
      { path: "states.approved", message: "unreachable from the initial state" },
    ]);
  });

  it("an unknown initial state (everything it led to becomes unreachable)", () => {
    const def = mini();
    def.initial = "begin";
    expect(problemsOf(def)).toEqual([
      { path: "initial", message: 'unknown state "begin"' },
      { path: "states.start", message: "unreachable from the initial state" },
      { path: "states.work", message: "unreachable from the initial state" },
      { path: "states.check", message: "unreachable from the initial state" },
      { path: "states.approved", message: "unreachable from the initial state" },
    ]);
  });

  it("an unknown global target, cancel's or step_failed's, named by its path", () => {
    const def = mini();
    def.global.cancel = "aborted";
    expect(problemsOf(def)).toEqual([
      { path: "global.cancel", message: 'unknown state "aborted"' },
      { path: "states.cancelled", message: "unreachable from the initial state" },
    ]);
    const failed = mini();
    failed.global.step_failed = "crashed";
    expect(problemsOf(failed)).toEqual([{ path: "global.step_failed", message: 'unknown state "crashed"' }]);
  });

  it("an unreachable state", () => {
    const def = mini();
    def.states.archived = { type: "terminal", outcome: "archived" };
    expect(problemsOf(def)).toEqual([{ path: "states.archived", message: "unreachable from the initial state" }]);
  });

  it("no terminal state", () => {
    expect(
      problemsOf({
        id: "forever",
        version: 1,
        title: "Forever",
        modes: ["implementation"],
        initial: "start",
        global: { cancel: "start", step_failed: "start" },
        states: {
          start: { type: "wait", on: { start: [{ target: "chat" }] } },
          chat: {
            type: "step",
            step: { role: "coder", output: "text", phase: "discussion", instruction: "Talk." },
            on: { done: [{ target: "chat" }] },
          },
        },
      }),
    ).toEqual([
      { path: "global.cancel", message: 'must lead to a terminal state, "start" is a wait state' },
      {
        path: "global.step_failed",
        message: 'must lead to a terminal state or a wait state with an "abort" transition, "start" is a wait state',
      },
      { path: "states", message: "no terminal state: the workflow could never finish" },
    ]);
  });

  it('a trigger that can never fire ("approve" on a text step)', () => {
    const def = mini();
    def.states.work = {
      type: "step",
      step: { role: "coder", output: "text", phase: "discussion", instruction: "Propose." },
      on: { done: [{ target: "check" }], approve: [{ target: "approved" }] },
    };
    expect(problemsOf(def)).toEqual([
      { path: "states.work.on.approve", message: 'trigger "approve" can never fire (its step output "text" emits: done)' },
    ]);
  });

  it("a step trigger on a wait state can never fire", () => {
    const def = mini();
    on(def, "start").done = [{ target: "work" }];
    expect(problemsOf(def)).toEqual([
      {
        path: "states.start.on.done",
        message: 'trigger "done" can never fire (a wait state emits: start, confirm, pass, feedback, abort)',
      },
    ]);
  });

  it("a step output trigger with no transition", () => {
    const def = mini();
    delete on(def, "check").schema_invalid;
    expect(problemsOf(def)).toEqual([
      { path: "states.check.on", message: 'no transition for trigger "schema_invalid" of step output "review_verdict"' },
    ]);
  });

  it("a trigger with an empty transition list", () => {
    const def = mini();
    on(def, "work").done = [];
    expect(problemsOf(def)).toEqual([
      { path: "states.work.on.done", message: "no transitions" },
      { path: "states.check", message: "unreachable from the initial state" },
      { path: "states.approved", message: "unreachable from the initial state" },
    ]);
  });

  it.each([
    ["one guard alone", [{ target: "work", guard: "under_cap" }]],
    [
      "the same guard twice",
      [
        { target: "work", guard: "at_cap" },
        { target: "failed", guard: "at_cap" },
      ],
    ],
  ])("only guarded transitions without a complementary pair (%s)", (_name, transitions) => {
    const def = mini();
    on(def, "check").changes_requested = transitions;
    expect(problemsOf(def)).toEqual([
      {
        path: "states.check.on.changes_requested",
        message: "every transition is guarded and the guards do not cover all cases: add an unguarded fallback",
      },
    ]);
  });

  it("only guarded transitions without a complementary pair (a cap guard and a mode guard that misses a mode)", () => {
    const def = { ...mini(), modes: ["proposal", "implementation"] };
    on(def, "start").start = [
      { target: "work", guard: "mode_implementation" },
      { target: "check", guard: "mode_proposal" },
    ];
    on(def, "check").changes_requested = [
      { target: "work", guard: "under_cap" },
      { target: "failed", guard: "mode_implementation" },
    ];
    expect(problemsOf(def)).toEqual([
      {
        path: "states.check.on.changes_requested",
        message: "every transition is guarded and the guards do not cover all cases: add an unguarded fallback",
      },
    ]);
  });

  it("complementary guards (mode_proposal / mode_implementation) and a guard plus a fallback are total", () => {
    const def = { ...mini(), modes: ["proposal", "implementation"] };
    on(def, "start").start = [
      { target: "work", guard: "mode_implementation" },
      { target: "check", guard: "mode_proposal" },
    ];
    on(def, "check").changes_requested = [{ target: "work", guard: "under_cap" }, { target: "failed" }];
    expect(() => loadDefinition(def)).not.toThrow();
  });

  it("reports every problem at once, and names the workflow in the message", () => {
    const def = mini();
    on(def, "work").done = [{ target: "chek" }];
    on(def, "work").approve = [{ target: "approved" }];
    expect(() => loadDefinition(def)).toThrow(
      'workflow "mini" is invalid:\n' +
        '  states.work.on.done[0].target: unknown state "chek"\n' +
        '  states.work.on.approve: trigger "approve" can never fire (its step output "build" emits: done)\n' +
        "  states.check: unreachable from the initial state",
    );
  });
});

describe("broken definitions: schema (zod) errors", () => {
  it.each<[string, (def: DefinitionJson) => void, DefinitionProblem[]]>([
    ["a missing title", (d) => delete d.title, [{ path: "title", message: "Invalid input: expected string, received undefined" }]],
    [
      "a missing step instruction",
      (d) => delete d.states.work!.step!.instruction,
      [{ path: "states.work.step.instruction", message: "Invalid input: expected string, received undefined" }],
    ],
    [
      "a missing global",
      (d) => delete (d as Loose).global,
      [{ path: "global", message: "Invalid input: expected object, received undefined" }],
    ],
    [
      "an unknown role",
      (d) => (d.states.work!.step!.role = "boss"),
      [{ path: "states.work.step.role", message: 'Invalid option: expected one of "coder"|"reviewer"|"tester"|"planner"|"executor"' }],
    ],
    [
      "an unknown output kind",
      (d) => (d.states.work!.step!.output = "poem"),
      [
        {
          path: "states.work.step.output",
          message:
            'Invalid option: expected one of "text"|"build"|"review_verdict"|"test_plan"|"commands"|"task_spec"|"execution"|"draft"|"critique"|"route"',
        },
      ],
    ],
    [
      "an unknown guard",
      (d) => (on(d, "check").changes_requested = [{ target: "work", guard: "sometimes" }, { target: "failed" }]),
      [
        {
          path: "states.check.on.changes_requested[0].guard",
          message:
            'Invalid option: expected one of "under_cap"|"at_cap"|"mode_proposal"|"mode_implementation"|"gate_on"|"gate_off"|"modifying"|"change_invalid"|"layer_prd"|"layer_design"|"layer_plan"',
        },
      ],
    ],
    [
      "an unknown state type",
      (d) => (d.states.approved!.type = "final"),
      [{ path: "states.approved.type", message: "Invalid discriminator value. Expected 'wait' | 'step' | 'terminal'" }],
    ],
    [
      "a bad target name",
      (d) => (on(d, "work").done = [{ target: "Check" }]),
      [{ path: "states.work.on.done[0].target", message: "state names are lower_snake_case" }],
    ],
    ["a zero cap", (d) => (d.maxIterations = 0), [{ path: "maxIterations", message: "Too small: expected number to be >0" }]],
    ["no modes", (d) => (d.modes = []), [{ path: "modes", message: "Too small: expected array to have >=1 items" }]],
  ])("%s", (_name, breakIt, expected) => {
    const def = mini();
    breakIt(def);
    expect(problemsOf(def)).toEqual(expected);
  });

  it("not an object at all → (root), workflow (unnamed)", () => {
    let error: unknown;
    try {
      loadDefinition(null);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidWorkflowError);
    expect((error as InvalidWorkflowError).workflowId).toBe("(unnamed)");
    expect((error as InvalidWorkflowError).message).toBe(
      'workflow "(unnamed)" is invalid:\n  (root): Invalid input: expected object, received null',
    );
  });

  // ZStateName carries the message "state names are lower_snake_case"; as a record key it
  // is reported as zod's generic "Invalid key in record", which does not say what is wrong.
  it("a bad state name says state names are lower_snake_case", () => {
    const def = mini();
    def.states.Review = { type: "terminal", outcome: "x" };
    expect(problemsOf(def)).toEqual([{ path: "states.Review", message: "state names are lower_snake_case" }]);
  });
});

// Definitions that pass every check today but cannot run as written.
describe("broken definitions the checks must also catch", () => {
  // StartTask / Begin fire "start" in the initial state; without a start transition
  // there, every StartTask throws INTERNAL ("no transition from ... on start").
  it("an initial state with no start transition", () => {
    const def = mini();
    def.initial = "work";
    delete def.states.start;
    expect(problemsOf(def).some((p) => /start/.test(p.message) && (p.path === "initial" || p.path.startsWith("states.work")))).toBe(true);
  });

  // mode_proposal / mode_implementation are "complementary" only if those are the only
  // modes: with a third mode, StartTask in it throws INTERNAL ("no transition ... on start").
  it("mode guards that do not cover every declared mode", () => {
    const def = mini();
    def.modes = ["proposal", "implementation", "quick"];
    on(def, "start").start = [
      { target: "work", guard: "mode_implementation" },
      { target: "check", guard: "mode_proposal" },
    ];
    expect(problemsOf(def).map((p) => p.path)).toContain("states.start.on.start");
  });

  // Global cancel / step_failed must end the session (R4: the session ends cancelled).
  // Pointing them at a step state makes Cancel schedule new work instead. Today this
  // loads no such problem, and the reachability walk, which marks global targets as
  // reached without exploring them, reports "check" and "approved" as unreachable.
  it("a global target that is not a terminal state (and only that problem)", () => {
    const def = mini();
    def.global.cancel = "work";
    delete def.states.cancelled;
    expect(problemsOf(def)).toEqual([{ path: "global.cancel", message: expect.stringContaining("terminal") as unknown as string }]);
  });
});

describe("workflow definitions: which guards cover every case, and where globals may lead", () => {
  const FALLBACK = "every transition is guarded and the guards do not cover all cases: add an unguarded fallback";
  /** The problems of `check`'s changes_requested transitions guarded by `guards` (null: unguarded). */
  const withGuards = (guards: (string | null)[], modes = ["proposal", "implementation"]) => {
    const def = { ...mini(), modes };
    on(def, "check").changes_requested = guards.map((guard, i) => ({ target: i % 2 ? "failed" : "work", ...(guard ? { guard } : {}) }));
    return problemsOrNone(def);
  };

  it.each([
    [["under_cap", "at_cap"], []],
    [["at_cap", "under_cap"], []],
    [["gate_on", "gate_off"], []],
    [["gate_off", "gate_on"], []],
    [["mode_proposal", "mode_implementation"], []],
    [["under_cap", null], []],
    [["under_cap", "at_cap", "gate_on"], []],
    [["under_cap"], [FALLBACK]],
    [["at_cap", "at_cap"], [FALLBACK]],
    [["gate_on", "gate_on"], [FALLBACK]],
    [["under_cap", "gate_off"], [FALLBACK]],
    [["at_cap", "gate_on"], [FALLBACK]],
    [["gate_off", "under_cap"], [FALLBACK]],
    [["mode_proposal", "mode_proposal"], [FALLBACK]],
    [["mode_implementation", "mode_implementation"], [FALLBACK]],
    [["mode_proposal", "at_cap"], [FALLBACK]],
  ] as [(string | null)[], string[]][])("guards %j: %j", (guards, messages) => {
    expect(withGuards(guards).map((p) => p.message)).toEqual(messages);
  });

  it("checked on its own (a definition the schema would refuse for having no mode), a guard without its complement still needs a fallback", () => {
    const def = loadDefinition(mini());
    const check = def.states.check!;
    if (check.type !== "step") throw new Error("check is a step state");
    const underCapOnly = { ...check, on: { ...check.on, changes_requested: [{ target: "work", guard: "under_cap" as const }] } };
    expect(checkDefinition({ ...def, modes: [], states: { ...def.states, check: underCapOnly } })).toEqual([
      { path: "states.check.on.changes_requested", message: FALLBACK },
    ]);
  });

  it("a mode guard names a declared mode; one mode guard is total for a workflow of that one mode", () => {
    expect(withGuards(["mode_implementation"], ["implementation"])).toEqual([]);
    expect(withGuards(["mode_proposal", null], ["implementation"])).toEqual([
      {
        path: "states.check.on.changes_requested",
        message: "guard mode_proposal names a mode the workflow does not declare (modes: implementation)",
      },
    ]);
    expect(withGuards(["mode_proposal", null], ["implementation", "quick"])[0]?.message).toBe(
      "guard mode_proposal names a mode the workflow does not declare (modes: implementation, quick)",
    );
  });

  it("step_failed may lead to a wait state with an abort (never a step state, even one with an abort transition); cancel and budget_exhausted only to a terminal state", () => {
    const waiting = (abort: boolean) => {
      const def = mini();
      def.states.stuck = { type: "wait", on: abort ? { abort: [{ target: "failed" }] } : { pass: [{ target: "failed" }] } };
      return def;
    };
    const failedTo = (abort: boolean) => {
      const def = waiting(abort);
      def.global.step_failed = "stuck";
      return problemsOrNone(def);
    };
    expect(failedTo(true)).toEqual([]);
    expect(failedTo(false)).toEqual([
      {
        path: "global.step_failed",
        message: 'must lead to a terminal state or a wait state with an "abort" transition, "stuck" is a wait state',
      },
    ]);
    const cancelTo = waiting(true);
    cancelTo.global.cancel = "stuck";
    delete cancelTo.states.cancelled;
    expect(problemsOrNone(cancelTo)).toEqual([
      { path: "global.cancel", message: 'must lead to a terminal state, "stuck" is a wait state' },
    ]);
    // An abort transition makes no step state a place to stop at (a step never sees a person's abort).
    const stepTo = mini();
    stepTo.global.step_failed = "work";
    on(stepTo, "work").abort = [{ target: "failed" }];
    expect(problemsOrNone(stepTo)).toEqual([
      {
        path: "global.step_failed",
        message: 'must lead to a terminal state or a wait state with an "abort" transition, "work" is a step state',
      },
      { path: "states.work.on.abort", message: 'trigger "abort" can never fire (its step output "build" emits: done)' },
    ]);
    const budgetTo = waiting(true);
    budgetTo.global.budget_exhausted = "stuck";
    expect(problemsOrNone(budgetTo)).toEqual([
      { path: "global.budget_exhausted", message: 'must lead to a terminal state, "stuck" is a wait state' },
    ]);
  });

  it("what only a global budget_exhausted or a modify state leads to is reachable; an unknown one is named", () => {
    const def = mini();
    def.states.spent = { type: "terminal", outcome: "budget_exhausted" };
    def.global.budget_exhausted = "spent";
    expect(problemsOrNone(def)).toEqual([]);
    def.global.budget_exhausted = "nowhere";
    expect(problemsOrNone(def)).toContainEqual({ path: "global.budget_exhausted", message: 'unknown state "nowhere"' });
    const modify = mini();
    modify.states.triage = { type: "wait", on: { start: [{ target: "work" }] } };
    modify.modify = { state: "triage" };
    expect(problemsOrNone(modify)).toEqual([]);
    modify.modify = { state: "nowhere" };
    expect(problemsOrNone(modify)).toEqual([
      { path: "modify.state", message: 'unknown state "nowhere"' },
      { path: "states.triage", message: "unreachable from the initial state" },
    ]);
  });

  it("a state's stage must be one of the workflow's stages", () => {
    const def = mini();
    def.states.work!.stage = "coding";
    expect(problemsOrNone(def)).toEqual([{ path: "states.work.stage", message: 'unknown stage "coding"' }]);
  });

  it("a draft or a critique step must name its stage: it works on a stage's artifacts", () => {
    for (const [output, phase] of [
      ["draft", "draft"],
      ["critique", "critique"],
    ] as const) {
      const def = mini();
      def.states.work = { ...def.states.work!, step: { role: "planner", output, phase, instruction: "Write it." } };
      expect(problemsOrNone(def)).toContainEqual({
        path: "states.work.stage",
        message: `a ${output} step drafts or critiques a stage's artifacts: name its stage`,
      });
    }
  });

  it("the error is an InvalidWorkflowError by name, named by the definition's id, and a definition without an id is (unnamed)", () => {
    const err = (() => {
      try {
        loadDefinition({ ...mini(), id: 7 });
      } catch (e) {
        return e as Error;
      }
      throw new Error("the definition loaded");
    })();
    expect(err.name).toBe("InvalidWorkflowError");
    expect(err.message).toMatch(/^workflow "\(unnamed\)" is invalid:\n {2}id: /);
    // A definition that fails the schema elsewhere is named by its id.
    const named = (() => {
      try {
        loadDefinition({ ...mini(), version: 0 });
      } catch (e) {
        return e as InvalidWorkflowError;
      }
      throw new Error("the definition loaded");
    })();
    expect(named.workflowId).toBe("mini");
    expect(named.message).toMatch(/^workflow "mini" is invalid:\n {2}version: /);
  });
});

describe("docs/workflows.md", () => {
  it("lists every built-in step's instruction as the engine sends it", () => {
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, "../../docs/workflows.md"), "utf8");
    const rows = doc.split("\n").filter((l) => l.startsWith("| `"));
    for (const def of Object.values(BUILTIN_WORKFLOWS)) {
      for (const [name, state] of Object.entries(def.states)) {
        if (state.type !== "step") continue;
        const row = rows.find((r) => r.startsWith(`| \`${def.id}\``) && r.includes(`| \`${name}\``));
        expect(row, `${def.id}.${name}`).toBeDefined();
        expect(row, `${def.id}.${name}`).toContain(state.step.instruction.replace(/\|/g, "\\|"));
      }
    }
  });
});

describe("the demo project's own workflow", () => {
  it("is docs/workflows.md's example, and loads", () => {
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, "../../docs/workflows.md"), "utf8");
    const example = JSON.parse(/<!-- tested: \.catcafe\/runtimes\.json -->\s*```json\n([\s\S]*?)```/.exec(doc)![1]!) as unknown;
    expect(DEMO_RUNTIMES).toEqual(example);
    expect(loadDefinition(DEMO_RUNTIMES.workflows.secure_change).id).toBe("secure_change");
  });
});
