// The Forge demo (req N1, F1): an idea small enough to read whole — a command-line word
// counter — taken through all seven stages by simulated agents (the scripted brain, no
// model, no network). The first PRD asks for monitoring the idea never asked for, so the
// rules and the critic reject it once; the PRD waits at a person's gate; the code's own
// test really runs at Check. Data only; the tests reuse it.
import type { ScriptedAgentConfigInput } from "../agents/config";
import { ARTIFACT_PATHS as A } from "../forge/artifacts";

export const FORGE_DEMO_IDEA = [
  "A command-line word counter: `node bin/wc.js <file>` prints the number of lines, words and characters of the file.",
  "A missing file gives a clear error and exit code 1. Include a unit test of the counting.",
].join("\n");
export const FORGE_DEMO_TITLE = "Forge demo: a command-line word counter";
/** The demo pipeline's one person's gate: the PRD. */
export const FORGE_DEMO_GATES = ["prd"];

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export const FORGE_IDEA_MD = `# Idea: a word counter

A small command-line tool: \`node bin/wc.js <file>\` prints the lines, words and characters of a file.

- For: anyone who wants counts without installing anything.
- Must: count lines, words and characters; say clearly when the file does not exist.
- Will not: read standard input, count several files at once, or format numbers.
- A unit test covers the counting.
`;

const REQUIREMENT = {
  count: {
    id: "R1",
    title: "Count lines, words and characters",
    description: "Lines are newline-separated, words are runs of non-space characters, characters are UTF-16 code units.",
    priority: "must",
  },
  read: {
    id: "R2",
    title: "Read the file named on the command line",
    description: "The first argument is the path of the file to count.",
    priority: "must",
  },
  error: {
    id: "R3",
    title: "Clear error for a missing file",
    description: "A missing or unreadable file prints one line to stderr and exits with code 1.",
    priority: "must",
  },
  tested: {
    id: "R4",
    title: "Unit tests of the counting",
    description: "A node:test suite checks the counts of an empty text, one line and several lines.",
    priority: "should",
  },
  monitoring: { id: "R5", title: "Monitoring of usage", description: "Send usage metrics to a monitoring dashboard.", priority: "could" },
} as const;

export const FORGE_REQUIREMENTS_V1 = json({ requirements: Object.values(REQUIREMENT) });
export const FORGE_REQUIREMENTS = json({ requirements: [REQUIREMENT.count, REQUIREMENT.read, REQUIREMENT.error, REQUIREMENT.tested] });
export const FORGE_FEATURES = json({
  features: [
    { id: "F1", name: "Counting", description: "count(text) returns lines, words and characters.", requirements: ["R1", "R4"] },
    {
      id: "F2",
      name: "Command line",
      description: "bin/wc.js reads the file and prints the counts or an error.",
      requirements: ["R2", "R3"],
    },
  ],
});
export const FORGE_PRD_MD_V1 = `# PRD: word counter

Count the lines, words and characters of one file from the command line; report usage to a monitoring dashboard.
See requirements.json (R1–R5) and features.json (F1, F2).
`;
export const FORGE_PRD_MD = `# PRD: word counter

Count the lines, words and characters of one file from the command line, with a clear error for a missing file.
See requirements.json (R1–R4) and features.json (F1, F2). No monitoring, no performance work: the idea does not ask for them.
`;

export const FORGE_DESIGN_MD = `# Design

One small Node.js package, no dependencies:

- \`src/count.js\` — a pure function \`count(text)\` returning \`{ lines, words, characters }\`.
- \`bin/wc.js\` — reads the file named by its first argument, prints \`lines words characters path\`, or an error and exit code 1.

Storage: none. A monolith of two modules.
`;
export const FORGE_DESIGN_JSON = json({
  architecture: "A single Node.js package of two modules.",
  components: [
    {
      id: "counter",
      name: "Counter",
      responsibility: "count(text): lines, words and characters of a string",
      technology: "Node.js module",
    },
    {
      id: "cli",
      name: "Command line",
      responsibility: "read the file named on the command line and print the counts or an error",
      technology: "Node.js script",
    },
  ],
  storage: "none",
});

export const FORGE_PLAN = json({
  tasks: [
    { id: "T1", title: "Write count(text)", feature: "F1", dependsOn: [] },
    { id: "T2", title: "Handle an empty text and a final newline", feature: "F1", dependsOn: ["T1"] },
    { id: "T3", title: "Read the file named on the command line", feature: "F2", dependsOn: ["T1"] },
    { id: "T4", title: "Print the counts and the path", feature: "F2", dependsOn: ["T3"] },
    { id: "T5", title: "Report a missing file with exit code 1", feature: "F2", dependsOn: ["T3"] },
  ],
});

export const FORGE_COUNT_JS = `// Counts the lines, words and characters of a text: what \`wc\` prints.
function count(text) {
  const lines = text === "" ? 0 : text.split("\\n").length - (text.endsWith("\\n") ? 1 : 0);
  const words = text.split(/\\s+/).filter(Boolean).length;
  return { lines, words, characters: text.length };
}

module.exports = { count };
`;
export const FORGE_WC_JS = `#!/usr/bin/env node
// node bin/wc.js <file>: prints "lines words characters file", or an error and exit code 1.
const fs = require("node:fs");
const { count } = require("../src/count.js");

const file = process.argv[2];
if (!file) {
  console.error("usage: node bin/wc.js <file>");
  process.exit(1);
}
let text;
try {
  text = fs.readFileSync(file, "utf8");
} catch (err) {
  console.error(\`wc: \${file}: \${err.code === "ENOENT" ? "no such file" : err.message}\`);
  process.exit(1);
}
const { lines, words, characters } = count(text);
console.log(\`\${lines} \${words} \${characters} \${file}\`);
`;
export const FORGE_COUNT_TEST_JS = `const test = require("node:test");
const assert = require("node:assert/strict");
const { count } = require("../src/count.js");

test("an empty text has nothing", () => {
  assert.deepEqual(count(""), { lines: 0, words: 0, characters: 0 });
});

test("one line without a final newline", () => {
  assert.deepEqual(count("hello cat cafe"), { lines: 1, words: 3, characters: 14 });
});

test("several lines, runs of spaces", () => {
  assert.deepEqual(count("a  b\\nc\\n"), { lines: 2, words: 3, characters: 7 });
});
`;
export const FORGE_TEST_ARGV = ["node", "--test", "test/count.test.js"];
export const FORGE_CODE_METADATA = json({
  files: ["src/count.js", "bin/wc.js", "test/count.test.js"],
  tasks: ["T1", "T2", "T3", "T4", "T5"].map((id) => ({ id, status: "done" })),
  checks: [{ argv: FORGE_TEST_ARGV }],
});
export const FORGE_CODE_FILES = {
  "src/count.js": FORGE_COUNT_JS,
  "bin/wc.js": FORGE_WC_JS,
  "test/count.test.js": FORGE_COUNT_TEST_JS,
  [A.codeMetadata]: FORGE_CODE_METADATA,
};

export const FORGE_DELIVERY_MD = `# Delivery report: word counter

Built: \`src/count.js\` (count(text)) and \`bin/wc.js\` (the command), with \`test/count.test.js\`.
Run: \`node bin/wc.js README.md\`.
Checks: \`node --test test/count.test.js\` passed at Check.
Left out on purpose: standard input, several files, monitoring.
`;

/** The demo's change of the delivered word counter (a modify session, req F5). */
export const FORGE_DEMO_CHANGE = "Add a --lines option that prints only the line count and the file.";
export const FORGE_CHANGE_REQUEST = json({
  summary: "A --lines option for the command: only the line count and the file.",
  layers: ["plan", "code"],
  risk: "low",
  components: ["cli"],
  constraints: ["the output without --lines stays as it is", "count(text) does not change"],
  acceptanceCriteria: ["node bin/wc.js --lines FILE prints the line count and FILE", "the unit tests still pass"],
});
export const FORGE_PLAN_MODIFIED = json({
  tasks: [
    ...(JSON.parse(FORGE_PLAN) as { tasks: unknown[] }).tasks,
    { id: "T6", title: "Add the --lines option", feature: "F2", dependsOn: ["T4"] },
  ],
});
export const FORGE_WC_LINES_JS = FORGE_WC_JS.replace(
  `const file = process.argv[2];`,
  `const linesOnly = process.argv[2] === "--lines";
const file = process.argv[linesOnly ? 3 : 2];`,
)
  .replace(`usage: node bin/wc.js <file>`, `usage: node bin/wc.js [--lines] <file>`)
  .replace(
    "console.log(`${lines} ${words} ${characters} ${file}`);",
    "console.log(linesOnly ? `${lines} ${file}` : `${lines} ${words} ${characters} ${file}`);",
  );
export const FORGE_CHANGE_REPORT_MD = `# Change: a --lines option

## Summary
\`node bin/wc.js --lines FILE\` prints only the line count and the file.

## Change details
\`bin/wc.js\` reads the option before the file name; \`count(text)\` is unchanged.

## Scope analysis
Layers: plan (task T6 added) and code (the command only). The requirements and the design are kept.

## Testing
\`node --test test/count.test.js\` passed at Check.
`;

const critique = (decision: "pass" | "revise", summary: string, findings: Array<{ id: string; severity: string; message: string }> = []) =>
  JSON.stringify({ decision, summary, findings });

export const FORGE_CRITIQUES = {
  prdRevise: critique("revise", "The PRD adds monitoring, which the idea does not ask for.", [
    { id: "prd-monitoring", severity: "blocking", message: "R5 (monitoring of usage) is beyond the idea: remove it." },
  ]),
  prdPass: critique("pass", "Four core requirements and two features, all from the idea."),
  designPass: critique("pass", "Two modules, no storage: as simple as it gets."),
  planPass: critique("pass", "Five tasks, dependencies in order, both features covered."),
  codingPass: critique("pass", "Every task is done; the test is the one the PRD asks for."),
};

/** Streamed like a real agent's reply, slowly enough to watch. */
const THINKING_MS = 80;
const say = (reply: string, files?: Record<string, string>) => ({ reply, chunkDelayMs: THINKING_MS, ...(files ? { files } : {}) });

/** The demo agents' replies by stage (byStage: entry n for the stage's iteration n + 1). */
export const FORGE_DEMO_SCRIPTS = {
  planner: {
    idea: [say("Wrote the idea down in .forge/idea.md (simulated).", { [A.idea]: FORGE_IDEA_MD })],
    prd: [
      say("Drafted the PRD: five requirements, two features (simulated).", {
        [A.prd]: FORGE_PRD_MD_V1,
        [A.requirements]: FORGE_REQUIREMENTS_V1,
        [A.features]: FORGE_FEATURES,
      }),
      say("Removed the monitoring requirement (simulated).", {
        [A.prd]: FORGE_PRD_MD,
        [A.requirements]: FORGE_REQUIREMENTS,
        [A.features]: FORGE_FEATURES,
      }),
    ],
    design: [say("Two modules, no storage (simulated).", { [A.design]: FORGE_DESIGN_MD, [A.designSpec]: FORGE_DESIGN_JSON })],
    plan: [say("Five tasks (simulated).", { [A.plan]: FORGE_PLAN })],
    delivery: [say("Wrote the delivery report (simulated).", { [A.deliveryReport]: FORGE_DELIVERY_MD })],
    // A modify session (the demo's change): the triage, the plan with one task more, the report.
    change: [say("The change touches the plan and the command (simulated).", { [A.changeRequest]: FORGE_CHANGE_REQUEST })],
    plan_modify: [say("Kept T1–T5, added T6 (simulated).", { [A.plan]: FORGE_PLAN_MODIFIED })],
    report: [say("Wrote the change report (simulated).", { [A.changeReport]: FORGE_CHANGE_REPORT_MD })],
  },
  coder: {
    coding: [say("Implemented T1–T5 and the unit test the PRD asks for (simulated).", FORGE_CODE_FILES)],
    coding_modify: [
      say("Added --lines to bin/wc.js; T1–T5 untouched (simulated).", {
        "bin/wc.js": FORGE_WC_LINES_JS,
        [A.codeMetadata]: json({
          files: ["bin/wc.js"],
          tasks: ["T1", "T2", "T3", "T4", "T5", "T6"].map((id) => ({ id, status: "done" })),
          checks: [{ argv: FORGE_TEST_ARGV }],
        }),
      }),
    ],
  },
  reviewer: {
    prd: [say(FORGE_CRITIQUES.prdRevise), say(FORGE_CRITIQUES.prdPass)],
    design: [say(FORGE_CRITIQUES.designPass)],
    plan: [say(FORGE_CRITIQUES.planPass)],
    coding: [say(FORGE_CRITIQUES.codingPass)],
  },
} satisfies Record<string, NonNullable<ScriptedAgentConfigInput["byStage"]>>;

/** The demo's scripts with no pause between streamed chunks (tests, the benchmark, the chaos run). */
export function instantScripts<E extends { chunkDelayMs?: number }>(stages: Record<string, E[]>): Record<string, E[]> {
  return Object.fromEntries(Object.entries(stages).map(([stage, entries]) => [stage, entries.map((e) => ({ ...e, chunkDelayMs: 0 }))]));
}
