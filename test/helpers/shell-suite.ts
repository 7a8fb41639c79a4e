// The end-to-end checks every agent CLI adapter passes with the REAL binary (from
// node_modules/.bin) pointed at a local stub of its provider's API: a streamed answer, a
// file edited through the CLI's own tool, 401 / 429 / a dropped stream classified, the
// CLI's own retry recovering from a drop, cancel and deadline ending every process the
// run started, and the runner's secrets never in any of those processes' environments.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAgent } from "../../server/agents/index";
import { agentHomesDir } from "../../server/agents/shells/cli-agent";
import type { CliShellAgentConfigInput } from "../../server/agents/config";
import { AgentError, type Agent, type AgentRequest, type ProviderRetryNotice } from "../../server/agents/types";
import { sandboxStatus } from "../../server/process/sandbox";
import { retryWaitMs } from "../../server/runner/dispatch";
import { descendantsOf, isAlive, processesMentioning, waitUntil } from "./processes";
import { startProviderStub, type ProviderApi, type ProviderStub, type StubRequest, type StubTurn } from "./shell-provider-stub";

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

export interface ShellProfile {
  kind: "claude" | "codex" | "gemini";
  api: ProviderApi;
  model: string;
  /** The API key as the stub receives it. */
  keyFrom(request: StubRequest): string | undefined;
  /** The CLI's tool call that writes `content` to `file` (relative) in `workspace`. */
  writeFile(workspace: string, file: string, content: string): ToolCall;
  /** The CLI's tool call that runs a shell command. */
  runCommand(command: string): ToolCall;
  /** The permissions the adapter needs for runCommand to run without asking. */
  commandPermissions: "edit" | "full";
  /** Whether a retry notice says how long the CLI waits (Codex's do not). */
  reportsRetryDelay: boolean;
  /** A tool call the CLI itself reports as failed (default: runCommand of `ls` on a missing file). */
  failingTool?: ToolCall;
  /** True when the CLI streams text deltas; false when it reports whole messages (Codex). */
  streamsDeltas: boolean;
  /** Whether the CLI's own retry (providerRetries > 0) repeats a request whose stream broke midway. */
  retriesBrokenStream: boolean;
}

export const RUNNER_SECRETS = {
  DATABASE_URL: "postgresql://catcafe:db-secret-6b1f@localhost/catcafe",
  NEXTAUTH_SECRET: "nextauth-secret-3c9d2e",
} as const;

/** The deadline of the timeout test: the CLI must start and ask the stub before it. */
const DEADLINE_MS = 10_000;

/** What the cancel test has the CLI run (Claude Code refuses a standalone sleep). */
const LONG_COMMAND = "tail -f /dev/null";

const REAL_BIN = path.resolve(import.meta.dirname, "../../node_modules/.bin");

export async function agentError(promise: Promise<unknown>): Promise<AgentError> {
  const err = await promise.then(
    (value) => {
      throw new Error(`expected an AgentError, got ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentError);
  return err as AgentError;
}

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  return !isAlive(pid);
}

/** Pids of the processes whose environment carries `mark`, and all their descendants. */
function runTree(mark: string): number[] {
  const roots = processesMentioning(mark).map((p) => p.pid);
  return [...new Set(roots.flatMap((pid) => [pid, ...descendantsOf(pid)]))];
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

function environmentOf(pid: number): string | null {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return null;
  }
}

export function describeShellWithStub(profile: ShellProfile): void {
  const keyEnv = `CATCAFE_TEST_${profile.kind.toUpperCase()}_KEY`;
  const key = `test-key-${profile.kind}-${Math.random().toString(36).slice(2, 10)}`;
  const unrelated = { CATCAFE_TEST_UNRELATED: "must-not-be-passed" };
  const saved: Record<string, string | undefined> = {};
  let workspace: string;
  let scratch: string;
  let stub: ProviderStub | null = null;

  beforeAll(() => {
    for (const [name, value] of Object.entries({ ...RUNNER_SECRETS, ...unrelated, [keyEnv]: key })) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  beforeEach(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), `catcafe-ws-${profile.kind}-`));
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), `catcafe-scratch-${profile.kind}-`));
  });
  afterEach(async () => {
    await stub?.close();
    stub = null;
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  /** The stubs' addresses, allowed to the agents the way an admin allows a provider on the host (settings access.agentHosts). */
  const stubHosts: string[] = [];

  async function withStub(turns: StubTurn[]): Promise<ProviderStub> {
    stub = await startProviderStub(profile.api, turns);
    stubHosts.push(new URL(stub.baseUrl).host);
    return stub;
  }

  function agentFor(s: ProviderStub, extra: Partial<CliShellAgentConfigInput> = {}): Agent {
    return createAgent({
      kind: profile.kind,
      id: `${profile.kind}-e2e`,
      model: profile.model,
      apiKeyEnv: keyEnv,
      baseUrl: s.baseUrl,
      ...extra,
    } as CliShellAgentConfigInput);
  }

  function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
    return {
      role: "coder",
      prompt: "say hello",
      context: [],
      workspace,
      invocation: 0,
      signal: new AbortController().signal,
      deadline: Date.now() + 90_000,
      egress: { hosts: [...stubHosts] },
      ...overrides,
    };
  }

  /**
   * A wrapper the adapter runs as its command: it records its environment and arguments, then
   * execs the real CLI. In the sandbox it sees only the workspace (where it records) and what
   * CATCAFE_SANDBOX_READ adds (the real CLI's node_modules, set by the caller).
   */
  function recordingWrapper(): { command: string; recorded(): Record<string, string>; args(): string } {
    const dump = path.join(workspace, ".wrapper-env.txt");
    const argsDump = path.join(workspace, ".wrapper-args.txt");
    const command = path.join(scratch, `${profile.kind}-wrapper.sh`);
    fs.writeFileSync(
      command,
      `#!/bin/sh\nenv > '${dump}'\nprintf '%s\\n' "$@" > '${argsDump}'\nexec '${path.join(REAL_BIN, profile.kind)}' "$@"\n`,
      { mode: 0o755 },
    );
    const recorded = () =>
      Object.fromEntries(
        fs
          .readFileSync(dump, "utf8")
          .split("\n")
          .filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l))
          .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
      );
    return { command, recorded, args: () => fs.readFileSync(argsDump, "utf8") };
  }

  describe(`${profile.kind}: the real CLI against a local ${profile.api} API stub`, () => {
    it("streams an answer; the CLI gets a minimal environment with the key and the stub's URL, and never the runner's secrets", async () => {
      const s = await withStub([{ kind: "text", chunks: ["Hello ", "from ", "the stub."] }]);
      const wrapper = recordingWrapper();
      const chunks: string[] = [];
      process.env.CATCAFE_SANDBOX_READ = path.dirname(fs.realpathSync(REAL_BIN));
      const response = await agentFor(s, { command: wrapper.command })
        .invoke(request({ prompt: "say hello to the cafe", onChunk: (t) => chunks.push(t) }))
        .finally(() => delete process.env.CATCAFE_SANDBOX_READ);
      expect(response.sandboxed).toBe(sandboxStatus().available);

      expect(response.text).toBe("Hello from the stub.");
      // The model as the CLI's own init event names it (Codex's stream names none).
      expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 7, ...(profile.kind === "codex" ? {} : { model: profile.model }) });
      expect(chunks.join("")).toContain("Hello from the stub.");
      if (profile.streamsDeltas) expect(chunks.length).toBeGreaterThanOrEqual(3);

      const env = wrapper.recorded();
      expect(env).not.toHaveProperty("DATABASE_URL");
      expect(env).not.toHaveProperty("NEXTAUTH_SECRET");
      expect(env).not.toHaveProperty("CATCAFE_TEST_UNRELATED");
      expect(env.HOME).not.toBe(os.homedir());
      // A private HOME of this run's, outside the temporary directory (where Codex's sandbox refuses its helper).
      expect(path.dirname(env.HOME ?? "")).toBe(await agentHomesDir());
      expect(path.basename(env.HOME ?? "")).toMatch(new RegExp(`^${profile.kind}-`));
      expect(env.HOME?.startsWith(os.tmpdir())).toBe(false);
      expect(Object.values(env)).toContain(key);
      // The endpoint reaches the CLI as a variable (claude, gemini) or a -c override (codex).
      expect(`${Object.values(env).join("\n")}\n${wrapper.args()}`).toContain(s.baseUrl);

      const [first] = s.modelRequests();
      expect(first, "the CLI made no model request").toBeDefined();
      expect(profile.keyFrom(first!)).toBe(key);
      const sent = JSON.stringify(s.requests);
      expect(sent).toContain("say hello to the cafe");
      for (const secret of Object.values(RUNNER_SECRETS)) expect(sent).not.toContain(secret);
    });

    it("edits a file in the workspace through the CLI's own tool", async () => {
      const call = profile.writeFile(workspace, "notes/hello.txt", "written by the cat\n");
      fs.mkdirSync(path.join(workspace, "notes"));
      const s = await withStub([
        { kind: "tool", ...call },
        { kind: "text", chunks: ["Wrote ", "notes/hello.txt."] },
      ]);
      const chunks: string[] = [];
      const response = await agentFor(s).invoke(request({ prompt: "write notes/hello.txt", onChunk: (t) => chunks.push(t) }));

      expect(fs.readFileSync(path.join(workspace, "notes/hello.txt"), "utf8")).toBe("written by the cat\n");
      expect(response.text).toBe("Wrote notes/hello.txt.");
      expect(chunks.join("")).toMatch(/\n› .*hello\.txt/);
      expect(s.modelRequests()).toHaveLength(2);
    });

    it("a 401 from the provider is provider_auth_error, not retried by us", async () => {
      const s = await withStub([{ kind: "error", status: 401 }]);
      const err = await agentError(agentFor(s, { providerRetries: 0 }).invoke(request()));
      expect(err).toMatchObject({ errorClass: "provider_auth_error", retryable: false });
      expect(err.message).not.toContain(key);
    });

    it("a 429 from the provider is provider_rate_limit, retryable", async () => {
      const s = await withStub([{ kind: "error", status: 429, headers: { "retry-after": "0" } }]);
      const err = await agentError(agentFor(s, { providerRetries: 0 }).invoke(request()));
      expect(err).toMatchObject({ errorClass: "provider_rate_limit", retryable: true });
    });

    it("a connection dropped mid-stream is provider_network_error (never a schema or tool error)", async () => {
      const s = await withStub([{ kind: "disconnect", chunks: ["partial ", "answer"] }]);
      const err = await agentError(agentFor(s, { providerRetries: 0 }).invoke(request()));
      expect(err).toMatchObject({ errorClass: "provider_network_error", retryable: true });
    });

    it("given retries, the CLI itself repeats a request whose connection was reset, and answers", async () => {
      const s = await withStub([{ kind: "reset" }, { kind: "text", chunks: ["Recovered."] }]);
      const response = await agentFor(s, { providerRetries: 2 }).invoke(request());
      expect(response.text).toBe("Recovered.");
      expect(s.modelRequests()).toHaveLength(2);
    });

    it(`given retries, a stream broken midway is ${profile.retriesBrokenStream ? "repeated by the CLI" : "not repeated by the CLI: provider_network_error, left to the runner's retry"}`, async () => {
      const s = await withStub([
        { kind: "disconnect", chunks: ["partial "] },
        { kind: "text", chunks: ["Recovered."] },
      ]);
      const outcome = agentFor(s, { providerRetries: 2 }).invoke(request());
      if (profile.retriesBrokenStream) {
        expect((await outcome).text).toBe("Recovered.");
        expect(s.modelRequests()).toHaveLength(2);
      } else {
        expect(await agentError(outcome)).toMatchObject({ errorClass: "provider_network_error", retryable: true });
        expect(s.modelRequests()).toHaveLength(1);
      }
    });

    it("an unreachable provider ends the run as provider_network_error within 10 s (the default: one retry of its own)", async () => {
      const s = await withStub([{ kind: "text", chunks: ["unused"] }]);
      const baseUrl = s.baseUrl;
      await s.close();
      stub = null;
      const startedAt = Date.now();
      const err = await agentError(
        createAgent({
          kind: profile.kind,
          id: "refused",
          model: profile.model,
          apiKeyEnv: keyEnv,
          baseUrl,
        } as CliShellAgentConfigInput).invoke(request({ deadline: Date.now() + DEADLINE_MS })),
      );
      expect(err).toMatchObject({ errorClass: "provider_network_error", retryable: true });
      expect(Date.now() - startedAt).toBeLessThan(10_000);
    });

    // Each CLI reports its own retries: Claude Code and Codex in their stream, Gemini CLI on stderr.
    it("a provider that keeps answering 429 with Retry-After: 3: the CLI's one retry and the runner's next attempt each wait ≥ 3 s, the attempt ends as provider_rate_limit within 10 s, every retry reported", async () => {
      const s = await withStub(Array.from({ length: 8 }, () => ({ kind: "error" as const, status: 429, headers: { "retry-after": "3" } })));
      const retries: ProviderRetryNotice[] = [];
      const attempt = async () => {
        const startedAt = Date.now();
        const err = await agentError(agentFor(s).invoke(request({ onProviderRetry: (n) => retries.push(n) })));
        expect(err).toMatchObject({ errorClass: "provider_rate_limit", retryable: true });
        expect(Date.now() - startedAt).toBeLessThan(10_000);
        return err;
      };
      const first = await attempt();
      // The runner's next attempt waits what its retry policy says, Retry-After included.
      expect(first.retryAfterMs).toBeGreaterThanOrEqual(3_000);
      await sleep(retryWaitMs(1, { baseMs: 100, retryAfterMs: first.retryAfterMs }));
      await attempt();
      const at = s.modelRequests().map((r) => r.at);
      expect(at).toHaveLength(4); // two attempts, each one request and the CLI's one retry
      for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!, `gap ${i}`).toBeGreaterThanOrEqual(2_900);
      expect(retries.map((r) => [r.retry, r.maxRetries])).toEqual([
        [1, 1],
        [1, 1],
      ]);
      expect(retries[0]!.error).toMatch(/429|rate|limit|Too Many/i);
      // The wait each retry announced, where the CLI states it: what the provider asked, or more.
      for (const r of retries) {
        if (profile.reportsRetryDelay) expect(r.delayMs).toBeGreaterThanOrEqual(3_000);
        else expect(r.delayMs).toBeNull();
      }
    });

    it("leaves nothing of a run in the system temp directory, after a failing and a succeeding run, with the sandbox on and off", async () => {
      const marker = `catcafe-tmp-marker-${profile.kind}-${Date.now()}`;
      const startedAt = Date.now();
      const before = new Set(fs.readdirSync(os.tmpdir()));
      const s = await withStub([
        { kind: "error", status: 500 },
        { kind: "text", chunks: ["Fine."] },
        { kind: "error", status: 500 },
        { kind: "text", chunks: ["Fine."] },
      ]);
      for (const sandbox of ["on", "off"]) {
        if (sandbox === "off") process.env.CATCAFE_SANDBOX = "off";
        try {
          await agentError(agentFor(s, { providerRetries: 0 }).invoke(request({ prompt: `fail ${marker}` })));
          expect((await agentFor(s, { providerRetries: 0 }).invoke(request({ prompt: `succeed ${marker}` }))).text).toBe("Fine.");
        } finally {
          delete process.env.CATCAFE_SANDBOX;
        }
      }
      // Other tests write to the temp directory at the same time: only what is this run's counts
      // (a CLI's name, or the prompt's marker inside, as in Gemini CLI's error reports).
      const left = fs
        .readdirSync(os.tmpdir())
        .filter((name) => !before.has(name))
        .map((name) => path.join(os.tmpdir(), name))
        .filter((file) => {
          const stat = fs.statSync(file, { throwIfNoEntry: false });
          if (!stat || stat.mtimeMs < startedAt) return false;
          if (/claude|codex|gemini/i.test(path.basename(file))) return true;
          return stat.isFile() && stat.size < 10_000_000 && fs.readFileSync(file, "utf8").includes(marker);
        });
      expect(left).toEqual([]);
    });

    it("counts the tool calls that ran and those that failed (a failing sandbox would show as every call failing)", async () => {
      const s = await withStub([
        { kind: "tool", ...(profile.failingTool ?? profile.runCommand("ls catcafe-no-such-file")) },
        { kind: "text", chunks: ["Could not list it."] },
      ]);
      const response = await agentFor(s, { permissions: profile.commandPermissions }).invoke(request({ prompt: "list it" }));
      expect(response.text).toBe("Could not list it.");
      expect(response.tools).toMatchObject({ calls: 1, failed: 1 });
      expect(response.tools?.lastError).toMatch(/catcafe-no-such-file|No such file|exit/i);
    });

    it("cancel ends the CLI and every process it started (checked by pid) within a second", async () => {
      const mark = `catcafe-cancel-${profile.kind}-${Date.now()}`;
      process.env.CATCAFE_TEST_RUN_MARK = mark;
      const controller = new AbortController();
      try {
        const s = await withStub([{ kind: "tool", ...profile.runCommand(LONG_COMMAND) }, { kind: "hang" }]);
        const running = agentFor(s, { permissions: profile.commandPermissions, passEnv: ["CATCAFE_TEST_RUN_MARK"] }).invoke(
          request({ prompt: "wait", signal: controller.signal }),
        );
        running.catch(() => {});
        await waitUntil(
          () => runTree(mark).some((pid) => commandLine(pid).startsWith(LONG_COMMAND)),
          60_000,
          `the CLI runs ${LONG_COMMAND}`,
        );
        const pids = runTree(mark);
        expect(pids.length).toBeGreaterThanOrEqual(2);
        // N4: not in the CLI, not in what it started.
        for (const pid of pids) {
          const env = environmentOf(pid);
          if (env === null) continue;
          expect(env, commandLine(pid)).not.toContain("DATABASE_URL=");
          expect(env, commandLine(pid)).not.toContain("NEXTAUTH_SECRET=");
        }

        const abortedAt = Date.now();
        controller.abort();
        const err = await agentError(running);
        expect(err).toMatchObject({ errorClass: "cancelled", retryable: false });
        await waitUntil(
          () => pids.every(gone),
          1_000 - (Date.now() - abortedAt),
          `every process of the run has ended (${pids.map((p) => `${p}: ${commandLine(p)}`).join("; ")})`,
        );
        expect(Date.now() - abortedAt).toBeLessThanOrEqual(1_000);
        expect(runTree(mark)).toEqual([]);
      } finally {
        controller.abort();
        delete process.env.CATCAFE_TEST_RUN_MARK;
      }
    });

    it("a deadline ends the run as a timeout and leaves nothing running", async () => {
      const mark = `catcafe-deadline-${profile.kind}-${Date.now()}`;
      process.env.CATCAFE_TEST_RUN_MARK = mark;
      try {
        const s = await withStub([{ kind: "hang" }]);
        // Long enough for the CLI to start and ask; then it waits for an answer that never comes.
        const running = agentFor(s, { passEnv: ["CATCAFE_TEST_RUN_MARK"], timeoutMs: DEADLINE_MS }).invoke(request());
        running.catch(() => {});
        await waitUntil(() => s.modelRequests().length > 0, DEADLINE_MS, "the CLI asks the stub");
        const pids = runTree(mark);
        expect(pids.length).toBeGreaterThanOrEqual(1);
        const err = await agentError(running);
        const endedAt = Date.now();
        expect(err).toMatchObject({ errorClass: "timeout", retryable: true });
        expect(err.message).toMatch(/deadline/);
        await waitUntil(() => pids.every(gone), 1_000, "every process of the run has ended");
        expect(Date.now() - endedAt).toBeLessThanOrEqual(1_000);
        expect(runTree(mark)).toEqual([]);
      } finally {
        delete process.env.CATCAFE_TEST_RUN_MARK;
      }
    });
  });
}
