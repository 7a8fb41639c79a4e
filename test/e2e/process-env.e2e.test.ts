// Every way the server starts a child process goes through server/process, and none of them
// hands the child the server's secrets: the command agent, each CLI shell (a stand-in CLI
// that writes out its environment), shell detection, the allowlisted command runner and
// git. Each child writes its whole environment to a file; the test reads it back. And the
// runner itself holds none of the web server's secrets: `npm start` gives it none, and one
// started by hand with them takes them out of its environment (still redacting their values).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandAgent } from "../../server/agents/command";
import { ClaudeAgent } from "../../server/agents/shells/claude";
import { CodexAgent } from "../../server/agents/shells/codex";
import { detectShell } from "../../server/agents/shells/detect";
import { GeminiAgent } from "../../server/agents/shells/gemini";
import { runCommand } from "../../server/commands/run";
import { observeProcesses } from "../../server/process/spawn";
import { redactKnownSecrets, withholdServerSecrets } from "../../server/process/env";
import { runGit } from "../../server/workspaces/git";
import { childEnvironments } from "../../scripts/lib/child-env";
import { createTestDatabase } from "../helpers/db";
import { startProcess, waitForExit, waitForOutput } from "../helpers/processes";

/** Set in this (the parent's) environment for the whole file; none may reach a child. */
const PARENT_SECRETS = {
  DATABASE_URL: "postgresql://cat:db-secret-3141@127.0.0.1:5432/catcafe",
  NEXTAUTH_SECRET: "nextauth-secret-2718",
  ADMIN_PASSWORD: "admin-password-1618",
  OPENAI_API_KEY: "sk-provider-key-1414",
};
const OWN_KEY = "sk-ant-own-key-1732";

let dir: string;
let dumpScript: string;
const saved: Record<string, string | undefined> = {};

/** The environment a child wrote to `file` (NUL-separated NAME=value). */
function readDump(file: string): Record<string, string> {
  const text = fs.readFileSync(file, "utf8");
  return Object.fromEntries(
    text
      .split("\0")
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
  );
}

function expectNoSecrets(env: Record<string, string>): void {
  const all = Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");
  for (const [name, value] of Object.entries(PARENT_SECRETS)) {
    expect(env).not.toHaveProperty(name);
    expect(all).not.toContain(value);
  }
  expect(env.PATH).toBeTruthy();
  expect(env.HOME).toBeTruthy();
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-process-env-"));
  // A stand-in for every program: writes its environment to $DUMP_TO (or argv[2]) and, as a
  // CLI, prints a version so detection accepts it.
  dumpScript = path.join(dir, "dump-env.mjs");
  fs.writeFileSync(
    dumpScript,
    `#!/usr/bin/env node
import fs from "node:fs";
const target = process.env.DUMP_TO || process.argv[2];
const out = target && !target.startsWith("-") ? target : ${JSON.stringify(path.join(dir, "cli-env"))} + "-" + process.argv.slice(2).join("_").replace(/[^a-z]/gi, "");
fs.writeFileSync(out, Object.entries(process.env).map(([k, v]) => k + "=" + v).join("\\0"));
if (process.argv.includes("--version")) console.log("2.1.330 (Claude Code)");
if (process.argv.includes("--help")) console.log("--print --output-format --permission-mode --add-dir --model --verbose --input-format");
`,
    { mode: 0o755 },
  );
  for (const [name, value] of Object.entries({ ...PARENT_SECRETS, ANTHROPIC_API_KEY: OWN_KEY })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});

afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

function request(workspace: string) {
  return {
    role: "coder" as const,
    prompt: "dump",
    context: [],
    workspace,
    invocation: 0,
    signal: new AbortController().signal,
    deadline: Date.now() + 20_000,
  };
}

describe("no child process gets the server's secrets", () => {
  it("the command agent", async () => {
    const out = path.join(dir, "command-agent-env");
    const agent = new CommandAgent({ kind: "command", id: "dump", argv: [process.execPath, dumpScript, out], prompt: "stdin" });
    await agent.invoke(request(dir));
    expectNoSecrets(readDump(out));
  });

  it.each([
    ["claude", (env: Record<string, string>) => new ClaudeAgent({ kind: "claude", id: "c", command: dumpScript, env })],
    [
      "codex",
      (env: Record<string, string>) => new CodexAgent({ kind: "codex", id: "x", command: dumpScript, apiKeyEnv: "ANTHROPIC_API_KEY", env }),
    ],
    [
      "gemini",
      (env: Record<string, string>) =>
        new GeminiAgent({ kind: "gemini", id: "g", command: dumpScript, apiKeyEnv: "ANTHROPIC_API_KEY", env }),
    ],
  ])("the %s shell: its own key only", async (kind, make) => {
    const out = path.join(dir, `${kind}-shell-env`);
    // The stand-in prints no event stream, so the run fails to parse: only its environment matters here.
    await make({ DUMP_TO: out })
      .invoke(request(dir))
      .catch(() => undefined);
    const env = readDump(out);
    expectNoSecrets(env);
    expect(Object.values(env)).toContain(OWN_KEY);
  });

  it("shell detection (the probes run --version and --help)", async () => {
    const detected = await detectShell("claude", { commands: { claude: dumpScript }, cwd: dir });
    expect(detected.version).toBe("2.1.330");
    expectNoSecrets(readDump(path.join(dir, "cli-env-version")));
    expectNoSecrets(readDump(path.join(dir, "cli-env-help")));
  });

  it("the allowlisted command runner", async () => {
    const out = path.join(dir, "command-env");
    fs.copyFileSync(dumpScript, path.join(dir, "dump.mjs"));
    const outcome = await runCommand({ argv: ["node", "dump.mjs", "command-env"], cwd: dir, allowlist: [["node", "dump.mjs", "*"]] });
    expect(outcome).toMatchObject({ status: "ran", exitCode: 0 });
    expectNoSecrets(readDump(out));
  });

  it("git", async () => {
    const repo = path.join(dir, "repo");
    fs.mkdirSync(repo);
    await runGit(repo, ["init", "-q"]);
    // An alias starting with `!` runs a program with git's own environment.
    await runGit(repo, ["-c", `alias.dump=!${process.execPath} ${dumpScript} ${path.join(dir, "git-env")}`, "dump"]);
    const env = readDump(path.join(dir, "git-env"));
    expectNoSecrets(env);
    expect(env.GIT_TERMINAL_PROMPT).toBe("0");
  });
});

describe("observing processes", () => {
  it("reports every process started inside observeProcesses, and its exit, to that observer only", async () => {
    const seen: string[] = [];
    const outside: string[] = [];
    await observeProcesses({ spawned: ({ pid }) => seen.push(`spawned ${pid}`), exited: ({ pid }) => seen.push(`exited ${pid}`) }, () =>
      runGit(dir, ["--version"]),
    );
    await runGit(dir, ["--version"]).then(() => outside.push("ran"));
    expect(seen).toHaveLength(2);
    const [spawned, exited] = seen as [string, string];
    expect(spawned).toMatch(/^spawned \d+$/);
    expect(exited).toBe(spawned.replace("spawned", "exited"));
    expect(outside).toEqual(["ran"]);
  });
});

describe("the runner's own environment holds none of the web server's secrets", () => {
  it("npm start gives the web server NEXTAUTH_SECRET and the runner neither it nor ADMIN_PASSWORD", () => {
    const { web, runner } = childEnvironments(
      { ...process.env, CATCAFE_START_FRONT_PID: "4242" },
      {
        databaseUrl: PARENT_SECRETS.DATABASE_URL,
        nextauthSecret: "generated-secret-5772",
        nextauthUrl: "http://localhost:3000",
        runId: "run-1",
        dataDir: dir,
        workspacesDir: path.join(dir, "workspaces"),
        drop: ["CATCAFE_START_FRONT_PID"],
      },
    );
    expect(web.NEXTAUTH_SECRET).toBe("generated-secret-5772");
    expect(runner).not.toHaveProperty("NEXTAUTH_SECRET");
    expect(Object.values(runner)).not.toContain("generated-secret-5772");
    expect(Object.values(runner)).not.toContain(PARENT_SECRETS.NEXTAUTH_SECRET);
    for (const env of [web, runner]) {
      expect(env).not.toHaveProperty("ADMIN_PASSWORD");
      expect(env).not.toHaveProperty("CATCAFE_START_FRONT_PID");
      expect(env).toMatchObject({ DATABASE_URL: PARENT_SECRETS.DATABASE_URL, CATCAFE_RUN_ID: "run-1", CATCAFE_DATA_DIR: dir });
    }
  });

  it("withholding takes the names out of the environment and keeps their values for redaction only", () => {
    const env: Record<string, string | undefined> = { NEXTAUTH_SECRET: "withheld-secret-8128", KEEP: "kept" };
    expect(
      withholdServerSecrets(["NEXTAUTH_SECRET", "ADMIN_PASSWORD"], { env, alsoRedact: { NEXTAUTH_SECRET: "from-the-file-9973" } }),
    ).toEqual(["NEXTAUTH_SECRET"]);
    expect(env).toEqual({ KEEP: "kept" });
    const said = redactKnownSecrets("a withheld-secret-8128 and from-the-file-9973 here", {});
    expect(said).toEqual({ text: "a [redacted NEXTAUTH_SECRET] and [redacted NEXTAUTH_SECRET] here", redactions: 2 });
  });

  it("a runner started by hand with them takes them out of its environment first thing, and says so", async () => {
    const db = await createTestDatabase();
    const proc = startProcess(process.execPath, ["--import", "tsx", "server/runner/main.ts"], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      env: {
        NODE_ENV: "test",
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: db.url,
        NEXTAUTH_SECRET: PARENT_SECRETS.NEXTAUTH_SECRET,
        ADMIN_PASSWORD: PARENT_SECRETS.ADMIN_PASSWORD,
        CATCAFE_DATA_DIR: dir,
        CATCAFE_RUNNER_DETECT_SHELLS: "0",
        CATCAFE_LOG_LEVEL: "info",
      },
    });
    try {
      await waitForOutput(proc, /"msg":"runner started"/, 30_000);
      const warning = proc
        .output()
        .split("\n")
        .find((line) => line.includes("started with the web server's secrets"));
      expect(warning, proc.output()).toBeDefined();
      expect(JSON.parse(warning!)).toMatchObject({ level: 40, withheld: ["NEXTAUTH_SECRET", "ADMIN_PASSWORD"] });
      // It names them, never their values.
      expect(proc.output()).not.toContain(PARENT_SECRETS.NEXTAUTH_SECRET);
      expect(proc.output()).not.toContain(PARENT_SECRETS.ADMIN_PASSWORD);
    } finally {
      proc.child.kill("SIGTERM");
      await waitForExit(proc, 20_000);
    }
  });
});
