// The broken-configuration corpus (test/fixtures/config/broken/): each case replaces one
// file of the valid example (test/fixtures/config/valid/full/.catcafe/) with a copy that has
// exactly one thing wrong, and must be reported with exactly these `file: path: problem`
// lines — by the loader, the binding checks and the settings reader alike.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { formatConfigErrors, parseProjectConfig, parseSettings, validateConfig } from "../../server/config";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/config");
const VALID = path.join(FIXTURES, "valid/full/.catcafe");
const BROKEN = path.join(FIXTURES, "broken");

function readDir(dir: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
}

/** The valid example with the case's file(s) put in; settings.json is the global settings file. */
function errorsOf(caseName: string): string[] {
  const { "settings.json": settingsText, ...replaced } = readDir(path.join(BROKEN, caseName));
  const settings = settingsText === undefined ? undefined : parseSettings(settingsText, "settings.json");
  if (settings?.errors.length) return formatConfigErrors(settings.errors);
  const loaded = parseProjectConfig({ ...readDir(VALID), ...replaced }, { settings: settings?.settings, settingsFile: "settings.json" });
  return formatConfigErrors(validateConfig(loaded));
}

const EXPECTED: Record<string, string[]> = {
  "agent-duplicate-id": [`.catcafe/agents.json: agents[3].id: duplicate agent id "reviewer-gpt" (already used by agents[1])`],
  "agent-glob-absolute": [
    `.catcafe/agents.json: agents[0].manifest.allowedFiles[0]: glob "/etc/**" is absolute (globs are relative to the repository root)`,
  ],
  "agent-glob-escapes": [
    `.catcafe/agents.json: agents[0].manifest.allowedFiles[1]: glob "../other-repo/**" climbs out of the repository with '..'`,
  ],
  "agent-glob-unbalanced": [
    `.catcafe/agents.json: agents[0].manifest.allowedFiles[0]: glob "src/{lib,bin/*.js" has a '{' without a matching '}'`,
  ],
  "agent-id-invalid": [
    `.catcafe/agents.json: agents[0].id: must use letters, digits, '.', '_' and '-', starting with a letter or digit (got "coder sim")`,
  ],
  "agent-neither-shell-nor-brain": [
    `.catcafe/agents.json: agents[3]: has neither a shell nor a brain: set defaultShell or defaultBrain here, or a default in projects.json or settings.json`,
  ],
  "agent-priority-range": [`.catcafe/agents.json: agents[1].priority: 5000 is out of range: must be at most 1000`],
  "agent-unknown-brain": [
    `.catcafe/agents.json: agents[2].defaultBrain: unknown brain "gpt5" (known: gpt, local, sim, sonnet); did you mean "gpt"?`,
  ],
  "agent-unknown-capability": [
    `.catcafe/agents.json: agents[1].manifest.capabilities[1]: "telepathy" is not one of: reasoning, code-generation, code-review, planning, testing, long-context, vision, tool-use, edit-files, run-commands, repo-context`,
  ],
  "agent-unknown-fsm": [
    `.catcafe/agents.json: agents[3].fsm: unknown FSM "execution_fsm_v2" (known: careful_fsm, execution_fsm_v1); did you mean "execution_fsm_v1"?`,
  ],
  "agent-unknown-role": [`.catcafe/agents.json: agents[3].role: "designer" is not one of: coder, reviewer, tester, planner, executor`],
  "agent-unknown-shell": [
    `.catcafe/agents.json: agents[2].defaultShell: unknown shell "claude-cli" (known: claude, claude-code, codex, gemini, sim-cli); did you mean "claude-code"?`,
  ],
  "bad-base-url": [`.catcafe/brains.json: brains.sonnet.baseUrl: must be an http:// or https:// URL (got "ftp://models.example.com")`],
  "shell-two-endpoints": [`.catcafe/shells.json: shells.claude-code.baseUrlEnv: give baseUrl or baseUrlEnv, not both`],
  "shell-retries-range": [`.catcafe/shells.json: shells.claude-code.providerRetries: 50 is out of range: must be at most 10`],
  "bad-shell-id": [
    `.catcafe/shells.json: shells["claude code"]: invalid key "claude code": must use letters, digits, '.', '_' and '-', starting with a letter or digit`,
  ],
  "bad-version-range": [
    `.catcafe/shells.json: shells.claude-code.versionRange: version range ">=one" is not a version comparator (like >=1.2.0, ^1.0.0, 1.x)`,
  ],
  "bind-brain-cannot-drive-shell": [
    `.catcafe/agents.json: agents[2].defaultBrain: brain "gpt" (openai) cannot drive shell "claude-code" (claude), which talks to anthropic brains only`,
  ],
  "bind-capability-missing": [
    `.catcafe/agents.json: agents[1].manifest.capabilities[1]: "vision" is required but not provided by brain "gpt" (provides: reasoning, code-review)`,
  ],
  "bind-fsm-no-error-event": [
    `.catcafe/runtimes.json: fsms.careful_fsm.states.EXECUTING.on: no "error" transition, but the runner ends every run of agent "planner-cli" with "success" or "error"`,
  ],
  "bind-output-format": [
    `.catcafe/agents.json: agents[1].manifest.output.format: is "text", but the "reviewing" step needs strict JSON (review_verdict)`,
  ],
  "bind-shell-interactive": [
    `.catcafe/agents.json: agents[2].defaultShell: shell "claude-code" cannot run non-interactively (nonInteractive is false in .catcafe/shells.json), so agent "tester-claude" cannot run in a session`,
  ],
  "fsm-no-terminal-state": [`.catcafe/runtimes.json: fsms.careful_fsm.states: no terminal state: a run could never end`],
  "fsm-unknown-target": [
    `.catcafe/runtimes.json: fsms.careful_fsm.states.CHECKING.on.reject: unknown state "FAILD" (known: CHECKING, COMPLETED, EXECUTING, FAILED, IDLE); did you mean "FAILED"?`,
  ],
  "fsm-unreachable-state": [`.catcafe/runtimes.json: fsms.careful_fsm.states.PAUSED: unreachable from the initial state "IDLE"`],
  "json-comment": [`.catcafe/projects.json: invalid JSON at line 2, column 3: comments are not allowed in JSON`],
  "json-duplicate-key": [
    `.catcafe/brains.json: brains.gpt: duplicate key "gpt" (again at line 6, column 5; JSON would silently keep only the last one)`,
  ],
  "json-missing-comma": [
    `.catcafe/agents.json: invalid JSON at line 3, column 42: expected "," or "}" after the value of "role", found "\\""`,
  ],
  "json-trailing-comma": [`.catcafe/shells.json: invalid JSON at line 4, column 3: trailing comma before "}"`],
  "missing-field": [`.catcafe/brains.json: brains.gpt.model: is required (a string)`],
  "out-of-range": [`.catcafe/brains.json: brains.gpt.temperature: 3 is out of range: must be at most 2`],
  "project-allowlist-rest-not-last": [`.catcafe/projects.json: allowlist[0][1]: \`**\` may only be the last token of a rule`],
  "project-max-iterations-zero": [`.catcafe/projects.json: maxIterations: 0 is out of range: must be at least 1`],
  "project-unknown-default-shell": [
    `.catcafe/projects.json: defaultShell: unknown shell "codexx" (known: claude, claude-code, codex, gemini, sim-cli); did you mean "codex"?`,
  ],
  "project-unknown-workflow": [
    `.catcafe/projects.json: workflow.default: unknown workflow "quick_reveiw" (known: forge, planning, quick_review, review_loop); did you mean "quick_review"?`,
  ],
  "project-workflow-mode": [`.catcafe/projects.json: workflow.mode: workflow "planning" has no mode "proposal" (modes: implementation)`],
  "prompt-arg-without-placeholder": [`.catcafe/shells.json: shells.sim-cli.args: with prompt "arg", an argument must contain {prompt}`],
  "root-not-object": [`.catcafe/agents.json: expected an object, got an array`],
  "secret-api-key-field": [
    `.catcafe/brains.json: brains.sonnet.apiKey: secrets must not be stored in configuration files: put the key in an environment variable and name that variable in "apiKeyEnv" (or "passEnv" for a shell); remove it from the file and rotate it (it may already be in git history)`,
  ],
  "secret-env-value": [
    `.catcafe/shells.json: shells.sim-cli.env.GITHUB_TOKEN: a literal value for the secret variable GITHUB_TOKEN is not allowed: list "GITHUB_TOKEN" in "passEnv" so the runner passes it from its own environment; remove it from the file and rotate it (it may already be in git history)`,
  ],
  "secret-in-api-key-env": [
    `.catcafe/brains.json: brains.gpt.apiKeyEnv: must be the NAME of an environment variable (like OPENAI_API_KEY), but this value looks like an API key itself: remove it from the file and rotate it (it may already be in git history)`,
  ],
  "secret-in-args": [
    `.catcafe/shells.json: shells.sim-cli.args[1]: looks like a secret (an API key or token): never store secrets in configuration files, keep them in environment variables; remove it from the file and rotate it (it may already be in git history)`,
  ],
  "settings-bad-backoff": [`settings.json: retry.backoffMs[1]: -2000 is out of range: must be at least 0`],
  "settings-unknown-brain": [`settings.json: defaultBrain: unknown brain "gpt5" (known: gpt, local, sim, sonnet); did you mean "gpt"?`],
  "settings-unknown-key": [`settings.json: timeout: unknown key; did you mean "timeouts"?`],
  "unknown-file": [
    `.catcafe/agent.json: unknown configuration file (expected: version.json, shells.json, brains.json, agents.json, runtimes.json, projects.json)`,
  ],
  "unknown-key": [`.catcafe/agents.json: agents[0].fsmId: unknown key; did you mean "fsm"?`],
  "unknown-provider": [`.catcafe/brains.json: brains.gpt.provider: "azure" is not one of: openai, anthropic, scripted`],
  "unknown-shell-kind": [`.catcafe/shells.json: shells.sim-cli.kind: "cursor" is not one of: claude, codex, gemini, command`],
  "version-incompatible": [
    `.catcafe/version.json: configVersion: configuration version "2.0" is not compatible with this Cat Cafe, which reads 1.x (current 1.0): upgrade Cat Cafe or rewrite the files for 1.x`,
  ],
  "version-malformed": [`.catcafe/version.json: configVersion: must be a version like "1.0" (got "one")`],
  "workflow-redefines-builtin": [
    `.catcafe/runtimes.json: workflows.review_loop: redefines the built-in workflow "review_loop": choose another id`,
  ],
  "workflow-unknown-state": [
    `.catcafe/runtimes.json: workflows.quick_review.states.reviewing.on.done[0].target: unknown state "finished"`,
    `.catcafe/runtimes.json: workflows.quick_review.states.done: unreachable from the initial state`,
  ],
  "wrong-type": [`.catcafe/brains.json: brains.sonnet.temperature: expected a number, got a string ("0.2")`],
};

describe("broken configuration corpus", () => {
  it("has at least 20 cases, each with its expected errors listed here", () => {
    const cases = fs.readdirSync(BROKEN).sort();
    expect(cases.length).toBeGreaterThanOrEqual(20);
    expect(cases).toEqual(Object.keys(EXPECTED).sort());
  });

  it("the valid example it starts from has no error at all", () => {
    expect(formatConfigErrors(validateConfig(parseProjectConfig(readDir(VALID))))).toEqual([]);
  });

  it.each(Object.entries(EXPECTED))("%s", (caseName, expected) => {
    expect(errorsOf(caseName)).toEqual(expected);
  });
});
