// The strict outputs of the gated phases (req W4–W6, M7) and the rules the system
// enforces on them: strict JSON, the blocking-finding rule, file globs.
import { describe, expect, it } from "vitest";
import { ZReviewVerdict, ZTaskSpec, ZTestPlan, type ReviewVerdict } from "../../server/events/agent-outputs";
import { enforceReviewRule, filesOutside, parseStrictJson } from "../../server/workflow/outputs";

const plan = { summary: "s", commands: [{ argv: ["npm", "test"] }] };
const withDefaults = { summary: "s", commands: [{ argv: ["npm", "test"], expect: { exitCode: 0 } }] };

describe("parseStrictJson", () => {
  it.each([
    ["a bare document", JSON.stringify(plan)],
    ["surrounding whitespace", `\n  ${JSON.stringify(plan)}  \n`],
    ["one ```json fence", "```json\n" + JSON.stringify(plan, null, 2) + "\n```"],
    ["one bare ``` fence", "```\n" + JSON.stringify(plan) + "\n```"],
    ["a fence with blank lines around it", "\n\n```json\n" + JSON.stringify(plan) + "\n```\n  "],
    ["a fence with spaces after its language", "```json  \n" + JSON.stringify(plan) + "\n```"],
  ])("accepts %s (and applies schema defaults)", (_name, text) => {
    expect(parseStrictJson(text, ZTestPlan)).toEqual({ ok: true, value: withDefaults });
  });

  it.each([
    ["prose before the fence", "Here you go:\n```json\n" + JSON.stringify(plan) + "\n```", /^not valid JSON: /],
    ["two fences", "```json\n" + JSON.stringify(plan) + "\n```\n```json\n{}\n```", /^not valid JSON: /],
    ["trailing prose", JSON.stringify(plan) + "\nHope this helps!", /^not valid JSON: /],
    ["prose after the fence", "```json\n" + JSON.stringify(plan) + "\n```\nHope this helps!", /^not valid JSON: /],
    ["an empty reply", "", /^not valid JSON: /],
  ])("rejects %s", (_name, text, error) => {
    const parsed = parseStrictJson(text, ZTestPlan);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.errors).toEqual([expect.stringMatching(error)]);
  });

  it("lists every schema error with its path", () => {
    expect(parseStrictJson(JSON.stringify({ summary: "", commands: [{ argv: [] }], extra: 1 }), ZTestPlan)).toEqual({
      ok: false,
      errors: [
        "summary: Too small: expected string to have >=1 characters",
        "commands.0.argv: Too small: expected array to have >=1 items",
        '(root): Unrecognized key: "extra"',
      ],
    });
  });

  it("a TaskSpec defaults tests to []", () => {
    const spec = { title: "Add flag", description: "Add a --verbose flag.", acceptanceCriteria: ["prints debug"], files: ["src/cli.ts"] };
    expect(parseStrictJson(JSON.stringify(spec), ZTaskSpec)).toEqual({ ok: true, value: { ...spec, tests: [] } });
  });

  it("a finding line must be a positive integer", () => {
    const verdict = { decision: "approve", summary: "s", findings: [{ severity: "nit", file: "a.ts", line: 0, message: "m" }] };
    expect(parseStrictJson(JSON.stringify(verdict), ZReviewVerdict)).toEqual({
      ok: false,
      errors: ["findings.0.line: Too small: expected number to be >0"],
    });
  });
});

describe("enforceReviewRule (blocking findings forbid approve)", () => {
  const verdict = (decision: ReviewVerdict["decision"], severities: ReviewVerdict["findings"][number]["severity"][]): ReviewVerdict => ({
    decision,
    summary: "s",
    findings: severities.map((severity) => ({ severity, file: "a.ts", message: "m" })),
  });

  it.each<[string, ReviewVerdict, ReturnType<typeof enforceReviewRule>]>([
    ["approve, no findings", verdict("approve", []), { decision: "approve", override: null }],
    ["approve, non-blocking findings", verdict("approve", ["major", "minor", "nit"]), { decision: "approve", override: null }],
    [
      "approve, one blocking",
      verdict("approve", ["blocking"]),
      { decision: "changes_requested", override: "decision rule: 1 blocking finding(s) forbid approve" },
    ],
    [
      "approve, two blocking",
      verdict("approve", ["blocking", "nit", "blocking"]),
      { decision: "changes_requested", override: "decision rule: 2 blocking finding(s) forbid approve" },
    ],
    ["changes_requested with blocking", verdict("changes_requested", ["blocking"]), { decision: "changes_requested", override: null }],
    ["changes_requested without findings", verdict("changes_requested", []), { decision: "changes_requested", override: null }],
  ])("%s", (_name, input, expected) => {
    expect(enforceReviewRule(input)).toEqual(expected);
  });
});

describe("filesOutside", () => {
  it("keeps the files no glob matches, dotfiles included in globs", () => {
    expect(filesOutside(["src/cli.ts", "src/.env", "src/a/b.ts", "srcx/a.ts", "README.md"], ["src/**"])).toEqual([
      "srcx/a.ts",
      "README.md",
    ]);
  });

  it("does not let a path climb out of an allowed folder", () => {
    expect(filesOutside(["src/../secrets.txt", "/etc/passwd"], ["src/**"])).toEqual(["src/../secrets.txt", "/etc/passwd"]);
  });

  it("a single star stays in its folder", () => {
    expect(filesOutside(["src/cli.ts", "src/log/a.ts"], ["src/*.ts"])).toEqual(["src/log/a.ts"]);
  });

  it("an empty allow-list allows nothing", () => {
    expect(filesOutside(["src/cli.ts"], [])).toEqual(["src/cli.ts"]);
  });
});
