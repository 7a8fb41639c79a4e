// What the demo is made of (req N1): a tiny CommonJS package whose slugify() has a real
// bug and whose node:test suite says so, the task that asks for the fix, and the scripted
// (simulated) agents that discuss it, fix it, review it and test it. Data only.
import { DEMO_CONVERSATION_SCRIPTS } from "./conversation-content";
import type { ScriptedAgentConfigInput } from "../agents/config";
import { FORGE_DEMO_SCRIPTS } from "./forge-content";

export const DEMO_PROJECT_ID = "demo";
export const DEMO_PROJECT_NAME = "Demo project (simulated agents)";
/** Where the demo repository lives, under the data directory. */
export const DEMO_REPO_DIR = "demo-project";
/** The only commands the demo's tester may run. */
export const DEMO_ALLOWLIST = [["node", "--test", "**"]];
export const DEMO_TEST_ARGV = ["node", "--test", "test/"];

export const DEMO_TASK_TITLE = "Demo: fix slugify() so the tests pass";
export const DEMO_TASK_PROMPT = [
  "Fix slugify() in src/slugify.js so that `node --test test/` passes.",
  'Titles like "Hello, World!" must become "hello-world" (no dash at either end), and accented letters must keep their base letter ("Crème brûlée" becomes "creme-brulee").',
  "Change the source, not the tests.",
].join("\n");

/** Pause before each streamed chunk (six per reply): enough to look like thinking, not to bore. */
const THINKING_MS = 120;

export const DEMO_BUGGY_SOURCE = `// Turns a title into the slug used in URLs: "Hello, World!" -> "hello-world".
function slugify(title) {
  return String(title)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-");
}

module.exports = { slugify };
`;

export const DEMO_FIXED_SOURCE = String.raw`// Turns a title into the slug used in URLs: "Hello, World!" -> "hello-world".
function slugify(title) {
  return String(title)
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "") // the accents NFKD split off: "è" -> "e" + U+0300
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

module.exports = { slugify };
`;

const DEMO_TEST = `const test = require("node:test");
const assert = require("node:assert/strict");
const { slugify } = require("../src/slugify.js");

test("punctuation at the ends leaves no dash", () => {
  assert.equal(slugify("Hello, World!"), "hello-world");
});

test("runs of spaces and symbols become one dash", () => {
  assert.equal(slugify("  Cats   &   Coffee  "), "cats-coffee");
});

test("accented letters keep their base letter", () => {
  assert.equal(slugify("Crème brûlée"), "creme-brulee");
});

test("a slug stays as it is", () => {
  assert.equal(slugify("already-a-slug-42"), "already-a-slug-42");
});

test("punctuation only gives an empty slug", () => {
  assert.equal(slugify("!!!"), "");
});
`;

/** How many tests the demo suite has (all pass once the bug is fixed; one passes before). */
export const DEMO_TEST_COUNT = 5;

const DEMO_PACKAGE_JSON = `${JSON.stringify(
  {
    name: "catcafe-demo",
    version: "1.0.0",
    private: true,
    description: "The Cat Cafe demo: slugify() has a bug, and its tests say so.",
    type: "commonjs",
    scripts: { test: "node --test test/" },
  },
  null,
  2,
)}\n`;

const DEMO_README = `# Cat Cafe demo project

Cat Cafe created this repository on its first start (\`CATCAFE_DEMO=0\` turns the demo off).
\`src/slugify.js\` has a bug, and \`node --test test/\` shows it.

\`.catcafe/runtimes.json\` defines a workflow of this project's own, \`secure_change\`
(spec, build, security review, tests): pick it in New task.

The demo task in Cat Cafe asks simulated agents (the scripted brain: canned replies, no AI
model, no network) to fix it. They discuss the task at a roundtable and wait for your
confirm; then the coder edits the file in a session workspace (a git worktree: this checkout
stays as it is), the reviewer returns a JSON verdict and the tester's \`node --test test/\`
really runs.
`;

/**
 * A workflow of the demo project's own (req M9), in its `.catcafe/runtimes.json`:
 * "spec → build → security review → tests", the example docs/workflows.md shows (a unit
 * test keeps the two equal). New task offers it beside the built-ins.
 */
export const DEMO_RUNTIMES = {
  workflows: {
    secure_change: {
      id: "secure_change",
      version: 1,
      title: "Spec, build, security review, tests",
      modes: ["implementation"],
      initial: "start",
      global: {
        cancel: "cancelled",
        step_failed: "failed",
      },
      states: {
        start: {
          type: "wait",
          on: {
            start: [
              {
                target: "spec",
              },
            ],
          },
        },
        spec: {
          type: "step",
          description: "The coder writes a short spec before touching anything.",
          step: {
            role: "coder",
            output: "text",
            phase: "discussion",
            instruction: "Write a short spec for the task: behaviour, files to change, edge cases. Do not change any file yet.",
          },
          on: {
            done: [
              {
                target: "building",
              },
            ],
          },
        },
        building: {
          type: "step",
          step: {
            role: "coder",
            output: "build",
            phase: "build",
            instruction: "Implement the spec above. Address every finding and failure listed below.",
          },
          on: {
            done: [
              {
                target: "security_review",
              },
            ],
          },
        },
        security_review: {
          type: "step",
          description: "A review for security only: injection, secrets, unsafe input handling.",
          step: {
            role: "reviewer",
            output: "review_verdict",
            phase: "verdict",
            instruction:
              'Review the diff for security problems only (injection, secrets in code, unchecked input, unsafe file or process use). Reply with JSON only: {"decision": "approve" | "changes_requested", "summary": string, "findings": [{"severity": "blocking" | "major" | "minor", "file": string, "line"?: number, "message": string}]}',
          },
          on: {
            approve: [
              {
                target: "test_plan",
              },
            ],
            changes_requested: [
              {
                target: "building",
                guard: "under_cap",
                iterate: true,
                reason: "security findings",
              },
              {
                target: "max_iterations_reached",
                guard: "at_cap",
                reason: "security findings",
              },
            ],
            schema_invalid: [
              {
                target: "review_schema_invalid",
              },
            ],
          },
        },
        test_plan: {
          type: "step",
          step: {
            role: "tester",
            output: "test_plan",
            phase: "test",
            instruction: 'Plan the tests. Reply with JSON only: {"summary": string, "commands": [{"argv": [string, ...]}]}.',
          },
          on: {
            plan_valid: [
              {
                target: "running_tests",
              },
            ],
            schema_invalid: [
              {
                target: "failed",
              },
            ],
          },
        },
        running_tests: {
          type: "step",
          step: {
            role: "tester",
            output: "commands",
            phase: "test",
            instruction: "Run the planned commands.",
          },
          on: {
            tests_passed: [
              {
                target: "approved",
              },
            ],
            tests_failed: [
              {
                target: "building",
                guard: "under_cap",
                iterate: true,
                reason: "test_failed",
              },
              {
                target: "max_iterations_reached",
                guard: "at_cap",
                reason: "test_failed",
              },
            ],
          },
        },
        approved: {
          type: "terminal",
          outcome: "approved",
        },
        review_schema_invalid: {
          type: "terminal",
          outcome: "review_schema_invalid",
        },
        max_iterations_reached: {
          type: "terminal",
          outcome: "max_iterations_reached",
        },
        failed: {
          type: "terminal",
          outcome: "failed",
        },
        cancelled: {
          type: "terminal",
          outcome: "cancelled",
        },
      },
    },
  },
};

/** The demo repository's files at its first commit. */
export const DEMO_FILES: Readonly<Record<string, string>> = {
  "README.md": DEMO_README,
  "package.json": DEMO_PACKAGE_JSON,
  "src/slugify.js": DEMO_BUGGY_SOURCE,
  "test/slugify.test.js": DEMO_TEST,
  ".catcafe/version.json": `${JSON.stringify({ configVersion: "1.0" }, null, 2)}\n`,
  ".catcafe/runtimes.json": `${JSON.stringify(DEMO_RUNTIMES, null, 2)}\n`,
};

const CODER_PROPOSAL = `Proposal (simulated coder)

The suite fails for two reasons:
1. slugify() turns every run of characters outside [a-z0-9] into "-", including the runs at the start and the end, so "Hello, World!" becomes "hello-world-".
2. Accented letters are outside [a-z], so "Crème brûlée" becomes "cr-me-br-l-e".

Approach:
- Normalize the title to NFKD and drop the combining marks (U+0300 to U+036F): "è" becomes "e".
- Lower-case, then replace each run of characters outside [a-z0-9] with one "-".
- Trim dashes at both ends.

Files: src/slugify.js only. test/slugify.test.js already describes the behaviour we want; I would not change it.
Risk: a title in a non-Latin script gives an empty slug. That is what happens today too.`;

const REVIEWER_CRITIQUE = `Critique (simulated reviewer)

The approach is right and small. Points to watch when you build it:
- Fold the accents before replacing separators, otherwise the marks turn into dashes.
- Trim with one anchored pattern (/^-+|-+$/g) rather than slicing, so "!!!" gives "" and not "-".
- No slug library for eight lines of code: agreed.
- Keep the diff to src/slugify.js; I will reject changes to the tests.`;

const TESTER_COMMENTS = `Testability and risks (simulated tester)

- test/slugify.test.js covers punctuation at both ends, runs of separators, accents, a title that is already a slug, and punctuation only. It runs with \`node --test test/\`; nothing to install.
- String.prototype.normalize is in every Node version we support, and stripping the marks after NFKD does not depend on the locale.
- Not covered: titles in non-Latin scripts (they give ""). Worth a follow-up task, not a blocker.
After the build I will run: node --test test/`;

const CODER_FIX = `Fixed slugify() (simulated coder): it now folds accents (NFKD, combining marks dropped) before replacing separators, and trims dashes at both ends. Changed src/slugify.js only.`;

/** The simulated judge of a bake-off (docs/bake-off.md, "The judge"): its canned advice is for the first contender. */
const REVIEWER_JUDGMENT = JSON.stringify({
  winner: "c1",
  ranking: ["c1", "c2"],
  reasons: ["Simulated judge: c1 is recommended as a canned reply; read the figures and the diffs, and pick yourself."],
});

const REVIEWER_VERDICT = JSON.stringify({
  decision: "approve",
  summary: "Accents are folded before separators are replaced and both ends are trimmed, as proposed; only src/slugify.js changed.",
  findings: [
    {
      severity: "nit",
      file: "src/slugify.js",
      line: 7,
      message: "Titles in non-Latin scripts still give an empty slug; worth a follow-up task.",
    },
  ],
});

const TESTER_PLAN = JSON.stringify({
  summary: "Run the slugify unit tests with Node's built-in test runner.",
  commands: [{ argv: DEMO_TEST_ARGV, description: "the unit tests in test/", expect: { exitCode: 0 } }],
});

/** A canned reply, streamed as if thought about. */
const say = (reply: string, files?: Record<string, string>) => ({ reply, chunkDelayMs: THINKING_MS, ...(files ? { files } : {}) });

function simulated(
  role: string,
  byOutput: NonNullable<ScriptedAgentConfigInput["byOutput"]>,
  byStage?: ScriptedAgentConfigInput["byStage"],
): ScriptedAgentConfigInput {
  const name = `${role[0]!.toUpperCase()}${role.slice(1)} (simulated)`;
  // `responses` is the fallback for an output the script has no reply for: the roundtable text.
  // A conversation's calls answer by their own outputs (reply, ballot, sop), with the skills.
  const chat = DEMO_CONVERSATION_SCRIPTS[role as keyof typeof DEMO_CONVERSATION_SCRIPTS];
  return {
    kind: "scripted",
    id: `${role}-sim`,
    name,
    responses: byOutput.text ?? [say(`${name}: nothing to add.`)],
    byOutput: { ...byOutput, ...chat?.byOutput },
    ...(chat ? { skills: chat.skills } : {}),
    ...(byStage ? { byStage } : {}),
  };
}

/**
 * The demo's agents answer by what each step asks for, not by turn: roundtable text for a
 * discussion, the fix for a build, an approving JSON verdict for a review, the test plan
 * for a test step. So any task a person starts on the demo project, in either mode, runs
 * to its end with canned replies (labelled simulated wherever they show): they always
 * talk about, and fix, slugify(), whatever the task says.
 */
export const DEMO_AGENTS = {
  coder: simulated(
    "coder",
    {
      text: [say(CODER_PROPOSAL)],
      build: [say(CODER_FIX, { "src/slugify.js": DEMO_FIXED_SOURCE })],
    },
    FORGE_DEMO_SCRIPTS.coder,
  ),
  reviewer: simulated(
    "reviewer",
    {
      text: [say(REVIEWER_CRITIQUE)],
      review_verdict: [say(REVIEWER_VERDICT)],
      bake_off_judge: [say(REVIEWER_JUDGMENT)],
    },
    FORGE_DEMO_SCRIPTS.reviewer,
  ),
  /** The Forge demo's writer of the idea, PRD, design, plan and delivery report. */
  planner: simulated("planner", { text: [say("Planner (simulated): nothing to add.")] }, FORGE_DEMO_SCRIPTS.planner),
  tester: simulated("tester", {
    text: [say(TESTER_COMMENTS)],
    test_plan: [say(TESTER_PLAN)],
  }),
} satisfies Record<string, ScriptedAgentConfigInput>;
