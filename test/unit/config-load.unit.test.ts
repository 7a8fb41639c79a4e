// Loading configuration (req M1): the valid examples load with every default applied; the
// JSON reader reports line and column and duplicate keys; the version check; references
// across files and the defaults they inherit; secrets refused without being repeated; the
// settings file; reading `.catcafe/` from a working tree and the validate command.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DEFAULT_SETTINGS,
  formatConfigErrors,
  loadProjectConfig,
  loadSettings,
  parseProjectConfig,
  parseSettings,
  validateConfig,
  validateProjectConfig,
} from "../../server/config";
import { parseJson } from "../../server/config/json";
import { ZDeliverySettings } from "../../server/config/schemas";
import { findSecrets, looksLikeKeyValue, looksLikeSecret, redactSecrets } from "../../server/config/secrets";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/config");
const FULL = path.join(FIXTURES, "valid/full");
const MINIMAL = path.join(FIXTURES, "valid/minimal");

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-config-"));
afterAll(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));
let tmpCount = 0;
function repoWith(files: Record<string, string>): string {
  const dir = path.join(tmpRoot, `repo-${++tmpCount}`);
  fs.mkdirSync(path.join(dir, ".catcafe"), { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, ".catcafe", name), text);
  return dir;
}
const json = (value: unknown) => JSON.stringify(value, null, 2);
const errorsOf = (texts: Record<string, string>, options = {}) => formatConfigErrors(parseProjectConfig(texts, options).errors);

describe("valid configurations load with defaults applied", () => {
  it("the full example: shells, brains, agents, FSMs, workflows and project settings", async () => {
    const { found, config, errors } = await loadProjectConfig(FULL);
    expect({ found, errors }).toEqual({ found: true, errors: [] });
    expect(config!.configVersion).toBe("1.0");
    expect(config!.files).toEqual(["version.json", "shells.json", "brains.json", "agents.json", "runtimes.json", "projects.json"]);
    // shells: built-in CLIs are there without an entry; defaults filled in
    expect(Object.keys(config!.shells).sort()).toEqual(["claude", "claude-code", "codex", "gemini", "sim-cli"]);
    expect(config!.shells["claude-code"]).toMatchObject({
      kind: "claude",
      command: "claude",
      args: ["--verbose"],
      passEnv: [],
      nonInteractive: true,
      builtin: false,
    });
    expect(config!.shells["sim-cli"]).toMatchObject({
      kind: "command",
      command: "node",
      prompt: "arg",
      capabilities: ["edit-files", "run-commands", "repo-context"],
    });
    // brains: rate limit from the settings default unless set; key variable by provider; endpoint is an alias of baseUrl
    expect(config!.brains.sonnet).toMatchObject({
      provider: "anthropic",
      apiKeyEnv: "ANTHROPIC_API_KEY",
      rateLimit: { minIntervalMs: 2000 },
    });
    expect(config!.brains.sonnet!.capabilities).toEqual([
      "reasoning",
      "code-generation",
      "code-review",
      "planning",
      "testing",
      "long-context",
      "tool-use",
    ]);
    expect(config!.brains.gpt).toMatchObject({ rateLimit: { minIntervalMs: 5000 }, capabilities: ["reasoning", "code-review"] });
    expect(config!.brains.local).toEqual({
      id: "local",
      provider: "openai",
      model: "llama3",
      baseUrl: "http://localhost:11434/v1",
      rateLimit: { minIntervalMs: 2000 },
      capabilities: [],
    });
    expect(config!.brains.sim).toMatchObject({ provider: "scripted", model: "scripted", responses: [{ reply: "Done.", chunkDelayMs: 0 }] });
    // agents: priority, FSM and manifest defaults; where each agent's shell and brain came from
    const [coder, reviewer, tester, planner] = config!.agents;
    expect(coder).toMatchObject({
      priority: 0,
      fsm: "execution_fsm_v1",
      shell: { id: null, source: "none" },
      brain: { id: "sim", source: "agent" },
    });
    expect(reviewer).toMatchObject({ priority: 10, manifest: { output: { format: "json" } }, shell: { id: null, source: "agent" } });
    expect(tester).toMatchObject({ shell: { id: "claude-code", source: "agent" }, brain: { id: "sonnet", source: "agent" } });
    expect(planner).toMatchObject({ fsm: "careful_fsm", manifest: { capabilities: ["repo-context"], input: { maxPromptChars: 20000 } } });
    expect(Object.keys(config!.fsms).sort()).toEqual(["careful_fsm", "execution_fsm_v1"]);
    expect(config!.fsms.careful_fsm!.states.EXECUTING!.on.success).toEqual({ target: "CHECKING", emit: [] });
    expect(config!.workflows.quick_review!.maxIterations).toBe(3);
    expect(config!.project).toMatchObject({
      maxIterations: 4,
      allowlist: [["node", "--test", "**"]],
      workflow: { default: "review_loop", mode: "implementation" },
    });
    expect(config!.settings).toEqual(DEFAULT_SETTINGS);
    expect(validateConfig({ config, errors })).toEqual([]);
  });

  it("the minimal example: one agent and one brain, everything else defaulted", async () => {
    const { config, errors } = await loadProjectConfig(MINIMAL);
    expect(errors).toEqual([]);
    expect(config!.configVersion).toBe("1.0");
    expect(config!.agents).toEqual([
      {
        id: "coder",
        role: "coder",
        defaultBrain: "sim",
        manifest: { capabilities: [] },
        priority: 0,
        fsm: "execution_fsm_v1",
        skills: [],
        index: 0,
        shell: { id: null, source: "none" },
        brain: { id: "sim", source: "agent" },
      },
    ]);
    expect(config!.project).toEqual({});
  });

  it("the settings defaults: timeouts, retry policy 1 s / 2 s / 4 s, one call per 2 s per brain, the Forge pipeline's own defaults, no MCP servers, the providers' key variables and no extra or private hosts, no automatic clean-up", () => {
    expect(DEFAULT_SETTINGS).toEqual({
      version: "1.0",
      timeouts: { stepMs: 600_000, commandMs: 30_000 },
      retry: { maxAttempts: 4, backoffMs: [1000, 2000, 4000] },
      rateLimit: { minIntervalMs: 2000 },
      forge: {},
      delivery: { branchPrefix: "catcafe/", method: "merge", target: "main", approvals: 0, auto: false },
      pricing: { currency: "USD", models: {} },
      // Agents receive each provider's key variable and nothing else of the runner's; they reach no host an admin did not add.
      access: {
        agentEnv: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"],
        agentHosts: [],
        privateHosts: [],
        deliveryTokenEnv: [],
      },
      mcpServers: [],
      // Failed sessions' workspaces are kept until someone cleans them up (docs/operations.md).
      sessions: { pruneFailedAfterDays: null },
      // Each runner host removes a finished session's worktree a week after it ended.
      workspaces: { keepFinishedDays: 7 },
    });
    expect(parseSettings(json({ retry: { maxAttempts: 2 } }), "s.json").settings.retry).toEqual({
      maxAttempts: 2,
      backoffMs: [1000, 2000, 4000],
    });
  });

  it('"none" may be written as null: a default shell or brain in settings, and an agent\'s own brain', () => {
    const settings = parseSettings(json({ defaultShell: null, defaultBrain: null }), "s.json");
    expect(formatConfigErrors(settings.errors)).toEqual([]);
    const loaded = parseProjectConfig(
      {
        "shells.json": json({ shells: { g: { kind: "gemini", apiKeyEnv: "TEAM_GEMINI_API_KEY" } } }),
        "agents.json": json({ agents: [{ id: "r", role: "reviewer", defaultShell: "g", defaultBrain: null }] }),
        "projects.json": json({ defaultBrain: null }),
      },
      { settings: settings.settings },
    );
    expect(formatConfigErrors(loaded.errors)).toEqual([]);
    expect(loaded.config!.agents[0]).toMatchObject({ shell: { id: "g" }, brain: { id: null, source: "agent" } });
  });

  it("a repository without .catcafe/ has nothing to load and nothing to report", async () => {
    const bare = path.join(tmpRoot, "bare");
    fs.mkdirSync(bare, { recursive: true });
    expect(await loadProjectConfig(bare)).toEqual({ found: false, config: null, errors: [] });
    expect(await validateProjectConfig(bare, { settingsFile: path.join(tmpRoot, "none.json") })).toEqual([]);
  });
});

describe("JSON syntax", () => {
  it.each([
    ['{"a": 1,}', 1, 9, 'trailing comma before "}"'],
    ['{\n  "a": [1, 2,]\n}', 2, 14, 'trailing comma before "]"'],
    ["{'a': 1}", 1, 2, 'expected a property name in double quotes, found "\'"'],
    ["{\"a\": 'x'}", 1, 7, "strings must use double quotes"],
    ['{"a" 1}', 1, 6, 'expected ":" after the property name "a", found "1"'],
    ['{"a": tru}', 1, 7, 'expected a value, found "t"'],
    ['{"a": "x\ny"}', 1, 9, "unterminated string (line break inside a string)"],
    ['{"a": "\\q"}', 1, 8, 'invalid escape "\\q"'],
    ['{"a": 01}', 1, 8, 'expected "," or "}" after the value of "a", found "1"'],
    ['{"a": 1} {}', 1, 10, 'unexpected "{" after the end of the JSON value'],
    ['{"a": 1', 1, 8, 'expected "," or "}" after the value of "a", found the end of the file'],
    ["", 1, 1, "the file is empty (expected a JSON object)"],
    ["/* no */ {}", 1, 1, "comments are not allowed in JSON"],
  ])("%j → line %i, column %i: %s", (text, line, column, message) => {
    expect(parseJson(text)).toEqual({ ok: false, line, column, message });
  });

  it("parses what JSON.parse parses (escapes, numbers, nesting, a byte-order mark)", () => {
    const text = '\uFEFF{"s": "a\\"b\\u00e9\\n", "n": [-1.5e3, 0, 12], "o": {"t": true, "f": false, "z": null}}';
    expect(parseJson(text)).toEqual({ ok: true, value: JSON.parse(text.slice(1)), duplicates: [] });
  });

  it("reports every duplicate key with its position; __proto__ stays plain data", () => {
    const result = parseJson('{\n  "a": {"x": 1, "x": 2},\n  "a": 3,\n  "__proto__": {"polluted": true}\n}');
    expect(result.ok && result.duplicates).toEqual([
      { path: ["a"], key: "x", line: 2, column: 17 },
      { path: [], key: "a", line: 3, column: 3 },
    ]);
    const value = result.ok ? (result.value as Record<string, unknown>) : {};
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(["a", "__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("version compatibility", () => {
  it("another major version is reported alone, even when the files are also broken for 1.x", () => {
    expect(
      errorsOf({ "version.json": json({ configVersion: "3.1" }), "agents.json": json({ agents: [{ id: "x", role: "nope" }] }) }),
    ).toEqual([
      '.catcafe/version.json: configVersion: configuration version "3.1" is not compatible with this Cat Cafe, which reads 1.x (current 1.0): upgrade Cat Cafe or rewrite the files for 1.x',
    ]);
  });

  it("any 1.x loads; a settings file of another major is refused", () => {
    expect(errorsOf({ "version.json": json({ configVersion: "1.7" }) })).toEqual([]);
    expect(parseProjectConfig({ "version.json": json({ configVersion: "1.x" }) }).config!.configVersion).toBe("1.x");
    expect(formatConfigErrors(parseSettings(json({ version: "0.9" }), "/data/settings.json").errors)).toEqual([
      '/data/settings.json: version: configuration version "0.9" is not compatible with this Cat Cafe, which reads 1.x (current 1.0): upgrade Cat Cafe or rewrite the files for 1.x',
    ]);
  });
});

describe("references across files and inherited defaults", () => {
  const brains = json({
    brains: { sim: { provider: "scripted", responses: [{ reply: "ok" }] }, gpt: { provider: "openai", model: "gpt-5" } },
  });
  const agents = json({
    agents: [
      { id: "a", role: "coder" },
      { id: "b", role: "reviewer", defaultBrain: "gpt" },
      { id: "c", role: "tester", defaultShell: null },
    ],
  });

  it("agents without their own shell / brain take projects.json's, then the settings'; null means no shell", () => {
    const settings = parseSettings(json({ defaultShell: "claude", defaultBrain: "gpt" }), "settings.json").settings;
    const fromSettings = parseProjectConfig({ "brains.json": brains, "agents.json": agents }, { settings }).config!;
    expect(fromSettings.agents.map((a) => [a.shell, a.brain])).toEqual([
      [
        { id: "claude", source: "settings" },
        { id: "gpt", source: "settings" },
      ],
      [
        { id: "claude", source: "settings" },
        { id: "gpt", source: "agent" },
      ],
      [
        { id: null, source: "agent" },
        { id: "gpt", source: "settings" },
      ],
    ]);
    const withProject = parseProjectConfig(
      { "brains.json": brains, "agents.json": agents, "projects.json": json({ defaultBrain: "sim" }) },
      { settings },
    ).config!;
    expect(withProject.agents.map((a) => a.brain)).toEqual([
      { id: "sim", source: "projects" },
      { id: "gpt", source: "agent" },
      { id: "sim", source: "projects" },
    ]);
  });

  it("a settings default naming a brain the project lacks is reported against the settings file when an agent inherits it", () => {
    const settings = parseSettings(json({ defaultBrain: "opus" }), "settings.json").settings;
    expect(
      errorsOf({ "agents.json": json({ agents: [{ id: "a", role: "coder" }] }) }, { settings, settingsFile: "/srv/catcafe/settings.json" }),
    ).toEqual(['/srv/catcafe/settings.json: defaultBrain: unknown brain "opus" (none defined)']);
    // ...and not when nothing in this project uses it nor lists brains of its own.
    expect(errorsOf({ "projects.json": json({ maxIterations: 2 }) }, { settings })).toEqual([]);
  });

  it("references into a file that is itself broken are not reported twice", () => {
    expect(
      errorsOf({ "brains.json": "{ broken", "agents.json": json({ agents: [{ id: "a", role: "coder", defaultBrain: "gpt" }] }) }),
    ).toEqual(['.catcafe/brains.json: invalid JSON at line 1, column 3: expected a property name in double quotes, found "b"']);
  });

  it("several problems in several files are all reported, in file order", () => {
    expect(
      errorsOf({
        "projects.json": json({ maxIterations: 99 }),
        "agents.json": json({
          agents: [
            { id: "a", role: "coder", defaultBrain: "x" },
            { id: "a", role: "coder", defaultBrain: "x" },
          ],
        }),
        "shells.json": json({ shells: { s: { kind: "command" } } }),
      }),
    ).toEqual([
      ".catcafe/shells.json: shells.s.command: is required (a string)",
      '.catcafe/agents.json: agents[0].defaultBrain: unknown brain "x" (none defined)',
      '.catcafe/agents.json: agents[1].id: duplicate agent id "a" (already used by agents[0])',
      '.catcafe/agents.json: agents[1].defaultBrain: unknown brain "x" (none defined)',
      ".catcafe/projects.json: maxIterations: 99 is out of range: must be at most 20",
    ]);
  });
});

describe("secrets are refused, and never repeated in the error", () => {
  const KEY = "sk-ant-api03-Zx81kPq0LmWn3vB7cT5yR2eU9oI4aS6d";

  it.each([
    [
      "an Anthropic key as apiKeyEnv",
      { brains: { b: { provider: "anthropic", model: "claude-x", apiKeyEnv: KEY } } },
      "brains.b.apiKeyEnv",
    ],
    [
      "a key inside a URL",
      { brains: { b: { provider: "openai", model: "m", baseUrl: "https://user:hunter2hunter2@llm.example.com/v1" } } },
      "brains.b.baseUrl",
    ],
    [
      "a bearer header in shell args",
      { shells: { s: { kind: "command", command: "x", args: ["-H", `Authorization: Bearer ${KEY.slice(7)}`] } } },
      "shells.s.args[1]",
    ],
    ["a token field", { shells: { s: { kind: "claude", token: "abc" } } }, "shells.s.token"],
  ])("%s", (_label, file, where) => {
    const name = "brains" in file ? "brains.json" : "shells.json";
    const errors = parseProjectConfig({ [name]: JSON.stringify(file) }).errors;
    expect(errors.map((e) => e.path)).toEqual([where]);
    expect(errors[0]!.message).toMatch(/secret|NAME of an environment variable/);
    for (const e of formatConfigErrors(errors)) {
      expect(e).not.toContain(KEY.slice(10));
      expect(e).not.toContain("hunter2");
    }
  });

  it("a delivery remote with credentials in its URL is refused (the remote is recorded, the token never): names, scp and ssh users are fine", () => {
    for (const remote of [
      "origin",
      "git@github.com:acme/shop.git",
      "ssh://git@github.com/acme/shop.git",
      "https://github.com/acme/shop.git",
    ])
      expect(ZDeliverySettings.safeParse({ remote }).success, remote).toBe(true);
    for (const remote of ["https://x-access-token:ghp_abc@github.com/acme/shop.git", "https://ghp_abc@github.com/acme/shop.git"]) {
      const parsed = ZDeliverySettings.safeParse({ remote });
      expect(parsed.success, remote).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/^must not carry credentials/);
      expect(JSON.stringify(parsed.error?.issues)).not.toContain("ghp_abc");
    }
  });

  it("names of variables are fine; long mixed tokens where a name belongs are not", () => {
    expect(looksLikeKeyValue("OPENAI_API_KEY")).toBe(false);
    expect(looksLikeKeyValue("my_key_var")).toBe(false);
    expect(looksLikeKeyValue("a8F3kLq9Zx2Pw7Rt4Yu6Io0")).toBe(true);
    expect(looksLikeSecret("ghp_0123456789abcdefghijABCDEFGHIJ")).toBe(true);
    expect(looksLikeSecret("AKIAIOSFODNN7EXAMPLE")).toBe(true);
    expect(looksLikeSecret("src/**/*.ts")).toBe(false);
    expect(looksLikeSecret("https://api.openai.com/v1")).toBe(false);
    expect(findSecrets({ env: { PATH_PREFIX: "/opt/bin", NPM_TOKEN: "" } })).toEqual([]);
  });

  it("redaction keeps variable names and replaces secret-shaped values", () => {
    expect(redactSecrets({ apiKeyEnv: "OPENAI_API_KEY", args: ["--key", KEY], nested: [{ password: "pw", ok: "fine" }] })).toEqual({
      apiKeyEnv: "OPENAI_API_KEY",
      args: ["--key", "[redacted]"],
      nested: [{ password: "[redacted]", ok: "fine" }],
    });
  });
});

describe("the settings file", () => {
  it("missing: every default; broken: errors naming the file", () => {
    const missing = path.join(tmpRoot, "no-such", "settings.json");
    expect(loadSettings(missing)).toEqual({ settings: DEFAULT_SETTINGS, file: missing, found: false, errors: [] });
    const file = path.join(tmpRoot, "settings.json");
    fs.writeFileSync(file, json({ rateLimit: { minIntervalMs: "2s" }, timeouts: { stepMs: 0 } }));
    expect(formatConfigErrors(loadSettings(file).errors)).toEqual([
      `${file}: timeouts.stepMs: 0 is out of range: must be at least 1`,
      `${file}: rateLimit.minIntervalMs: expected a number, got a string ("2s")`,
    ]);
  });
});

describe("reading .catcafe/ from a working tree and the validate command", () => {
  it("reports unknown files, symbolic links and a .catcafe that is not a directory", async () => {
    const repo = repoWith({ "agents.json": json({ agents: [] }), "README.md": "notes are fine", "brain.json": "{}" });
    fs.symlinkSync("/etc/hostname", path.join(repo, ".catcafe", "shells.json"));
    expect(await validateProjectConfig(repo, { settingsFile: path.join(tmpRoot, "none.json") })).toEqual([
      ".catcafe/shells.json: must be a regular file (symbolic links are not followed)",
      ".catcafe/brain.json: unknown configuration file (expected: version.json, shells.json, brains.json, agents.json, runtimes.json, projects.json)",
    ]);
    const notDir = path.join(tmpRoot, "not-dir");
    fs.mkdirSync(notDir);
    fs.writeFileSync(path.join(notDir, ".catcafe"), "{}");
    expect(formatConfigErrors((await loadProjectConfig(notDir)).errors)).toEqual([".catcafe/: must be a directory"]);
  });

  it("validate: empty for the valid example; settings-file errors and binding errors included", async () => {
    const settingsFile = path.join(tmpRoot, "validate-settings.json");
    expect(await validateProjectConfig(FULL, { settingsFile })).toEqual([]);
    fs.writeFileSync(settingsFile, json({ retry: { maxAttempts: 0 } }));
    expect(await validateProjectConfig(FULL, { settingsFile })).toEqual([
      `${settingsFile}: retry.maxAttempts: 0 is out of range: must be at least 1`,
    ]);
    const repo = repoWith({
      "brains.json": json({ brains: { tiny: { provider: "openai", model: "tiny-1", capabilities: ["code-generation"] } } }),
      "agents.json": json({ agents: [{ id: "rev", role: "reviewer", defaultBrain: "tiny", manifest: { capabilities: ["code-review"] } }] }),
    });
    expect(await validateProjectConfig(repo, { settingsFile: path.join(tmpRoot, "none.json") })).toEqual([
      '.catcafe/agents.json: agents[0].manifest.capabilities[0]: "code-review" is required but not provided by brain "tiny" (provides: code-generation)',
    ]);
  });
});
