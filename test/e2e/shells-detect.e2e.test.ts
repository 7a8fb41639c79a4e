// Detection (req M2) of the real CLIs this project pins, and of fake ones: too old, not
// there, lacking a flag, hanging on --version. The result is plain JSON.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { detectShell, detectShells } from "../../server/agents/shells/detect";
import { upsertProject } from "../../server/projects/projects";
import { detectConfiguredShells } from "../../server/projects/shells";
import { createTestDatabase } from "../helpers/db";
import { gitIn } from "../helpers/tasks";

const PINNED = (
  JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8")) as {
    devDependencies: Record<string, string>;
  }
).devDependencies;
const REAL_BIN = path.resolve(import.meta.dirname, "../../node_modules/.bin");
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-detect-test-"));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A fake CLI in `dir` that prints `version` for --version, runs what follows `--` for
 * `sandbox` (as `codex sandbox` does), and prints `help` for anything else.
 */
function fake(name: string, version: string, help: string, versionDelayMs = 0): string {
  const file = path.join(dir, name);
  const sandbox = `if (a[0] === "sandbox") { const c = a.slice(a.indexOf("--") + 1); process.exit(require("child_process").spawnSync(c[0], c.slice(1), { stdio: "inherit" }).status ?? 1); }`;
  const script = `const a = process.argv.slice(2); ${sandbox} if (a.includes("--version")) setTimeout(() => console.log(${JSON.stringify(version)}), ${versionDelayMs}); else console.log(${JSON.stringify(help)});`;
  fs.writeFileSync(file, `#!/usr/bin/env node\n${script}\n`, { mode: 0o755 });
  return file;
}

describe("detectShells", () => {
  it("finds the pinned claude, codex and gemini, reads their versions, and finds every capability", async () => {
    const found = await detectShells();
    expect(found.map((s) => s.shell)).toEqual(["claude", "codex", "gemini"]);
    const packages = { claude: "@anthropic-ai/claude-code", codex: "@openai/codex", gemini: "@google/gemini-cli" } as const;
    for (const shell of found) {
      expect(shell, JSON.stringify(shell)).toMatchObject({
        path: path.join(REAL_BIN, shell.shell),
        version: PINNED[packages[shell.shell]],
        supported: true,
        capabilities: { nonInteractive: true, editFiles: true, workingDirectory: true },
        problems: [],
      });
    }
    // Plain JSON: storable as it is.
    expect(JSON.parse(JSON.stringify(found))).toEqual(found);
  });

  it("a CLI outside the required range is found but not supported, and says why", async () => {
    const help = fs.readFileSync(path.resolve(import.meta.dirname, "../fixtures/shells/claude/help.txt"), "utf8");
    const result = await detectShell("claude", { commands: { claude: fake("claude", "1.0.128 (Claude Code)", help) } });
    expect(result).toMatchObject({
      version: "1.0.128",
      supported: false,
      capabilities: { nonInteractive: true, editFiles: true, workingDirectory: true },
    });
    expect(result.problems).toEqual(["version 1.0.128 is outside the supported range >=2.0.0 <3.0.0"]);
    const widened = await detectShell("claude", { commands: { claude: path.join(dir, "claude") }, ranges: { claude: ">=1.0.0" } });
    expect(widened).toMatchObject({ supported: true, requiredRange: ">=1.0.0", problems: [] });
  });

  it("a CLI whose help lacks the adapter's flags is not supported; the flags are named", async () => {
    const result = await detectShell("gemini", {
      commands: { gemini: fake("gemini", "0.61.0", "Usage: gemini [options]\n  -p, --prompt  Prompt\n  -m, --model  Model") },
    });
    expect(result).toMatchObject({
      version: "0.61.0",
      supported: false,
      capabilities: { nonInteractive: false, editFiles: false, workingDirectory: false },
    });
    expect(result.problems[0]).toMatch(
      /does not offer --output-format, stream-json, --approval-mode, auto_edit, --include-directories, --skip-trust, yolo/,
    );
  });

  it("a CLI found nowhere is reported with its problem, not thrown", async () => {
    const result = await detectShell("codex", { env: { PATH: dir }, cwd: dir, commands: { codex: "codex-not-installed-xyz" } });
    expect(result).toEqual({
      shell: "codex",
      path: null,
      version: null,
      requiredRange: ">=0.160.0 <1.0.0",
      supported: false,
      capabilities: { nonInteractive: false, editFiles: false, workingDirectory: false },
      problems: ['not found: "codex-not-installed-xyz" is not in node_modules/.bin or on PATH'],
      keyEnv: { name: "OPENAI_API_KEY", set: false },
    });
    // Whether its key variable is set where it was looked for, never the value.
    const keyed = await detectShell("codex", {
      env: { PATH: dir, OPENAI_API_KEY: "sk-secret-value" },
      cwd: dir,
      commands: { codex: "nope" },
    });
    expect(keyed.keyEnv).toEqual({ name: "OPENAI_API_KEY", set: true });
    expect(JSON.stringify(keyed)).not.toContain("sk-secret-value");
  });

  it("finds a configured name on PATH (after node_modules/.bin, which holds the pinned CLIs)", async () => {
    fake(
      "codex-nightly",
      "codex-cli 0.170.1",
      fs.readFileSync(path.resolve(import.meta.dirname, "../fixtures/shells/codex/help.txt"), "utf8"),
    );
    const result = await detectShell("codex", {
      env: { PATH: `${dir}${path.delimiter}${process.env.PATH ?? ""}` },
      cwd: dir,
      commands: { codex: "codex-nightly" },
    });
    expect(result).toMatchObject({ path: path.join(dir, "codex-nightly"), version: "0.170.1", supported: true });
  });

  it("makes a harmless edit through Codex's own sandbox; where that sandbox cannot work, editing is reported as failed", async () => {
    // Codex refuses to place its sandbox helper under the temporary directory: with the run's
    // HOME there, every command it would run fails. Detection must say so.
    const saved = process.env.CATCAFE_AGENT_HOMES;
    process.env.CATCAFE_AGENT_HOMES = path.join(dir, "homes");
    try {
      const result = await detectShell("codex");
      expect(result.capabilities.editFiles).toBe(false);
      expect(result.supported).toBe(false);
      expect(result.problems.join("\n")).toMatch(/a harmless edit through its own sandbox \(codex sandbox\) failed/);
    } finally {
      if (saved === undefined) delete process.env.CATCAFE_AGENT_HOMES;
      else process.env.CATCAFE_AGENT_HOMES = saved;
    }
    // And with the HOME where it belongs, the same probe edits.
    expect(await detectShell("codex")).toMatchObject({ supported: true, capabilities: { editFiles: true }, problems: [] });
  });

  it("a CLI that hangs on --version is cut off and reported", async () => {
    const result = await detectShell("claude", { commands: { claude: fake("claude", "2.1.0", "", 10_000) }, timeoutMs: 1_000 });
    expect(result.supported).toBe(false);
    expect(result.problems[0]).toMatch(/--version timed out after 1000 ms/);
  });
});

describe("detectConfiguredShells (catcafe shells detect --project)", () => {
  it("probes each CLI a project's .catcafe/shells.json runs with its own command, at that command and with its own range", async () => {
    const db = await createTestDatabase();
    const repo = path.join(dir, "repo");
    fs.mkdirSync(path.join(repo, ".catcafe"), { recursive: true });
    const help = fs.readFileSync(path.resolve(import.meta.dirname, "../fixtures/shells/claude/help.txt"), "utf8");
    const old = fake("claude-old", "1.0.128 (Claude Code)", help);
    fs.writeFileSync(
      path.join(repo, ".catcafe", "shells.json"),
      JSON.stringify({ shells: { "team-claude": { kind: "claude", command: old, versionRange: ">=2.0.0" }, plain: { kind: "codex" } } }),
    );
    gitIn(repo, "init", "-q", "-b", "main");
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "shells");
    await upsertProject(db.pool, { id: "shells", name: "Shells", repoPath: repo, allowlist: [], agents: {} });
    const checked = await detectConfiguredShells(db.pool, "shells");
    // Only the shell with a command of its own; the plain codex is what `shells detect` already probes.
    expect(checked.map((s) => [s.shellId, s.shell, s.command, s.path, s.version, s.requiredRange, s.supported])).toEqual([
      ["team-claude", "claude", old, old, "1.0.128", ">=2.0.0", false],
    ]);
    expect(checked[0]!.problems.join("\n")).toMatch(/1\.0\.128.*>=2\.0\.0/);
  });
});
