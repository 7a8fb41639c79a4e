import { describe, expect, it } from "vitest";
import { classifyCommandOutcome } from "../../server/commands/classify";
import { buildCommandEnv, ZExtraEnv } from "../../server/commands/env";
import { OutputTail } from "../../server/process/output-tail";
import type { CommandRun } from "../../server/commands/run";

function run(overrides: Partial<CommandRun>): CommandRun {
  return {
    status: "ran",
    argv: ["npm", "test"],
    rule: ["npm", "test"],
    exitCode: 0,
    signal: null,
    timedOut: false,
    timeoutMs: 30_000,
    cancelled: false,
    spawnError: null,
    durationMs: 12,
    stdoutTail: "",
    stderrTail: "",
    stdoutBytes: 0,
    stderrBytes: 0,
    truncated: false,
    sandboxed: true,
    ...overrides,
  };
}

describe("classifyCommandOutcome", () => {
  it.each<[string, Parameters<typeof classifyCommandOutcome>[0], ReturnType<typeof classifyCommandOutcome>]>([
    ["success", run({}), null],
    [
      "refusal",
      { status: "refused", code: "not_allowlisted", reason: "`ls` is not on the project's allowlist" },
      { errorClass: "command_refused", reason: "`ls` is not on the project's allowlist" },
    ],
    ["non-zero exit", run({ exitCode: 1 }), { errorClass: "command_failed", reason: "exited with code 1" }],
    ["killed by a signal", run({ exitCode: null, signal: "SIGSEGV" }), { errorClass: "command_failed", reason: "killed by SIGSEGV" }],
    [
      "timeout",
      run({ exitCode: null, signal: "SIGTERM", timedOut: true, timeoutMs: 500 }),
      { errorClass: "timeout", reason: "timed out after 500 ms" },
    ],
    [
      "cancel",
      run({ exitCode: null, signal: "SIGTERM", cancelled: true, durationMs: 40 }),
      { errorClass: "cancelled", reason: "cancelled after 40 ms" },
    ],
    [
      "missing executable",
      run({ exitCode: null, spawnError: { code: "ENOENT", message: "executable not found: `nope`" } }),
      { errorClass: "command_failed", reason: "executable not found: `nope`" },
    ],
  ])("classifies a %s", (_name, outcome, expected) => {
    expect(classifyCommandOutcome(outcome)).toEqual(expected);
  });
});

describe("OutputTail", () => {
  it("keeps everything under the cap", () => {
    const tail = new OutputTail(10);
    tail.push(Buffer.from("abc"));
    tail.push(Buffer.from("def"));
    expect([tail.text(), tail.totalBytes, tail.truncated]).toEqual(["abcdef", 6, false]);
  });

  it("keeps only the last bytes across many chunks and one huge chunk", () => {
    const tail = new OutputTail(5);
    for (const piece of ["0123", "4567", "89"]) tail.push(Buffer.from(piece));
    expect([tail.text(), tail.totalBytes, tail.truncated]).toEqual(["56789", 10, true]);
    tail.push(Buffer.from("abcdefghij"));
    expect([tail.text(), tail.totalBytes]).toEqual(["fghij", 20]);
  });

  it("drops a UTF-8 character cut in half at the start of the tail", () => {
    const tail = new OutputTail(4);
    tail.push(Buffer.from("aé€")); // 1 + 2 + 3 bytes: the tail starts inside "é"
    expect(tail.text()).toBe("€");
  });

  it("counts but keeps nothing with a zero cap", () => {
    const tail = new OutputTail(0);
    tail.push(Buffer.from("abc"));
    expect([tail.text(), tail.totalBytes, tail.truncated]).toEqual(["", 3, true]);
  });
});

describe("command environment", () => {
  it("is built from nothing: no variable of the server leaks", () => {
    const env = buildCommandEnv({ home: "/runs/r1/home", tmp: "/runs/r1/tmp", extra: { NODE_ENV: "test" } });
    expect(Object.keys(env).sort()).toEqual([
      "CI",
      "HOME",
      "LANG",
      "LC_ALL",
      "NODE_ENV",
      "NO_COLOR",
      "PATH",
      "TEMP",
      "TERM",
      "TMP",
      "TMPDIR",
    ]);
    expect(env).toMatchObject({
      HOME: "/runs/r1/home",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      CI: "1",
      NO_COLOR: "1",
      TERM: "dumb",
      NODE_ENV: "test",
    });
    // Its temporary directory is the run's own, removed with it.
    expect([env.TMPDIR, env.TMP, env.TEMP]).toEqual(["/runs/r1/tmp", "/runs/r1/tmp", "/runs/r1/tmp"]);
  });

  it("refuses secret-looking or reserved extra variables, naming them", () => {
    const issues = (env: Record<string, string>) => {
      const result = ZExtraEnv.safeParse(env);
      return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    };
    expect(issues({ DATABASE_URL: "postgres://x" })).toEqual([
      "DATABASE_URL: DATABASE_URL looks like a secret; secrets never reach commands",
    ]);
    expect(issues({ NEXTAUTH_SECRET: "s" })).toHaveLength(1);
    expect(issues({ OPENAI_API_KEY: "k" })).toHaveLength(1);
    expect(issues({ GITHUB_TOKEN: "t" })).toHaveLength(1);
    expect(issues({ PATH: "/evil" })).toEqual(["PATH: PATH is set by the runner and cannot be overridden"]);
    expect(issues({ "NOT A NAME": "x" })).toHaveLength(1);
    expect(issues({ NODE_ENV: "test", DEBUG: "1" })).toEqual([]);
  });
});
