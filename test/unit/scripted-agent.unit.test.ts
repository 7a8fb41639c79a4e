import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ZAgentConfig, type ScriptedAgentConfigInput } from "../../server/agents/config";
import { createAgent } from "../../server/agents/index";
import { ScriptedAgent } from "../../server/agents/scripted";
import { AgentError, MAX_AGENT_OUTPUT_BYTES, type AgentRequest } from "../../server/agents/types";

let workspace: string;
let outside: string;

beforeEach(() => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-scripted-"));
  workspace = path.join(root, "workspace");
  outside = path.join(root, "outside");
  fs.mkdirSync(workspace);
  fs.mkdirSync(outside);
});

afterEach(() => {
  fs.rmSync(path.dirname(workspace), { recursive: true, force: true });
});

function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: "coder",
    prompt: "do the thing",
    context: [],
    workspace,
    invocation: 0,
    signal: new AbortController().signal,
    deadline: Date.now() + 10_000,
    ...overrides,
  };
}

function scripted(responses: ScriptedAgentConfigInput["responses"]): ScriptedAgent {
  return new ScriptedAgent({ kind: "scripted", id: "cat-1", responses });
}

/** The AgentError `promise` rejects with (fails the test if it resolves or throws something else). */
async function agentError(promise: Promise<unknown>): Promise<AgentError> {
  const err = await promise.then(
    (value) => {
      throw new Error(`expected an AgentError, got ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentError);
  return err as AgentError;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("scripted agent", () => {
  it("is created from config, labelled simulated", () => {
    const agent = createAgent({ kind: "scripted", id: "demo-coder", responses: [{ reply: "hi" }] });
    expect(agent).toBeInstanceOf(ScriptedAgent);
    expect(agent).toMatchObject({ id: "demo-coder", kind: "scripted", simulated: true });
  });

  it("plays the entry of each invocation and repeats the last one past the end", async () => {
    const agent = scripted([{ reply: "first" }, { reply: "second" }, { reply: "third" }]);
    const texts: string[] = [];
    for (let invocation = 0; invocation < 6; invocation++) texts.push((await agent.invoke(request({ invocation }))).text);
    expect(texts).toEqual(["first", "second", "third", "third", "third", "third"]);
  });

  it("streams a reply in several chunks, in order, with the delay; the text is their concatenation", async () => {
    const reply = "Proposal: add a cache 🐱 in front of the parser, keyed by file hash 🐈‍⬛, invalidated on save.";
    const agent = scripted([{ reply, chunkDelayMs: 20 }]);
    const chunks: { text: string; at: number }[] = [];
    const started = Date.now();
    const response = await agent.invoke(request({ onChunk: (text) => chunks.push({ text, at: Date.now() }) }));
    expect(response.text).toBe(reply);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(chunks.map((c) => c.text).join("")).toBe(reply);
    for (const c of chunks) expect(c.text).not.toMatch(LONE_SURROGATE);
    // Spread out in time, not delivered all at once at the end.
    expect(chunks[0]!.at - started).toBeGreaterThanOrEqual(15);
    expect(chunks.at(-1)!.at - chunks[0]!.at).toBeGreaterThanOrEqual(15 * (chunks.length - 1));
  });

  it("writes and deletes files inside the workspace before replying", async () => {
    fs.writeFileSync(path.join(workspace, "old.txt"), "stale");
    const agent = scripted([
      {
        reply: "done",
        files: { "src/app.ts": "export const x = 1;\n", "docs/deep/notes.md": "# notes", "old.txt": null, "never-existed.txt": null },
      },
    ]);
    let seenAtFirstChunk: string | null = null;
    await agent.invoke(
      request({
        onChunk: () => {
          seenAtFirstChunk ??= fs.readFileSync(path.join(workspace, "src/app.ts"), "utf8");
        },
      }),
    );
    expect(seenAtFirstChunk).toBe("export const x = 1;\n");
    expect(fs.readFileSync(path.join(workspace, "docs/deep/notes.md"), "utf8")).toBe("# notes");
    expect(fs.existsSync(path.join(workspace, "old.txt"))).toBe(false);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it("refuses paths that leave the workspace", async () => {
    for (const bad of ["../escape", "a/../../escape", "/etc/passwd", "..", "a\\..\\b", ""]) {
      const parsed = ZAgentConfig.safeParse({ kind: "scripted", id: "c", responses: [{ reply: "x", files: { [bad]: "pwned" } }] });
      expect(parsed.success, bad).toBe(false);
      expect(parsed.error?.issues[0]?.message).toContain(`path "${bad}"`);
      expect(() => createAgent({ kind: "scripted", id: "c", responses: [{ reply: "x", files: { [bad]: "pwned" } }] })).toThrow();
    }
    expect(fs.existsSync(path.join(path.dirname(workspace), "escape"))).toBe(false);
  });

  it("refuses a path that escapes through a symlink, and then writes nothing at all", async () => {
    fs.symlinkSync(outside, path.join(workspace, "link"));
    fs.symlinkSync(path.join(outside, "target.txt"), path.join(workspace, "file-link"));
    const attempts: Record<string, string>[] = [
      { "ok.txt": "fine", "link/pwned.txt": "pwned" },
      { "ok.txt": "fine", "file-link": "pwned" },
    ];
    for (const files of attempts) {
      const err = await agentError(scripted([{ reply: "x", files }]).invoke(request()));
      expect(err.errorClass).toBe("tool_error");
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/refused path "(link\/pwned\.txt|file-link)"/);
    }
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(workspace, "ok.txt"))).toBe(false);
  });

  describe("faults", () => {
    it("disconnect streams the first afterChars characters, then fails as a retryable network error", async () => {
      const chunks: string[] = [];
      const err = await agentError(scripted([{ fault: "disconnect", afterChars: 30 }]).invoke(request({ onChunk: (t) => chunks.push(t) })));
      expect(err).toMatchObject({ errorClass: "provider_network_error", retryable: true });
      expect(err.partialOutput).toHaveLength(30);
      expect(chunks.join("")).toBe(err.partialOutput);

      const long = await agentError(scripted([{ fault: "disconnect", afterChars: 5_000 }]).invoke(request()));
      expect(long.partialOutput).toHaveLength(5_000);
      const none = await agentError(scripted([{ fault: "disconnect", afterChars: 0, message: "socket hang up" }]).invoke(request()));
      expect(none).toMatchObject({ errorClass: "provider_network_error", message: "socket hang up", partialOutput: "" });
    });

    it("timeout waits for the deadline, then fails as a retryable timeout", async () => {
      const started = Date.now();
      const err = await agentError(scripted([{ fault: "timeout" }]).invoke(request({ deadline: started + 150 })));
      expect(err).toMatchObject({ errorClass: "timeout", retryable: true });
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect(Date.now() - started).toBeLessThan(1_000);
    });

    it("timeout gives way to a cancel", async () => {
      const abort = new AbortController();
      setTimeout(() => abort.abort(), 50);
      const started = Date.now();
      const err = await agentError(scripted([{ fault: "timeout" }]).invoke(request({ signal: abort.signal, deadline: started + 60_000 })));
      expect(err).toMatchObject({ errorClass: "cancelled", retryable: false });
      expect(Date.now() - started).toBeLessThan(150);
    });

    it.each([
      [{ fault: "rate_limit", retryAfterMs: 5_000 } as const, { errorClass: "provider_rate_limit", retryable: true, retryAfterMs: 5_000 }],
      [{ fault: "auth" } as const, { errorClass: "provider_auth_error", retryable: false, retryAfterMs: undefined }],
      [
        { fault: "server_error" } as const,
        { errorClass: "provider_network_error", retryable: true, message: expect.stringMatching(/^HTTP 500/) },
      ],
      [{ fault: "auth", message: "key revoked" } as const, { errorClass: "provider_auth_error", message: "key revoked" }],
    ])("%j fails with the right class", async (entry, expected) => {
      const chunks: string[] = [];
      const err = await agentError(scripted([entry]).invoke(request({ onChunk: (t) => chunks.push(t) })));
      expect(err).toMatchObject({ ...expected, partialOutput: "" });
      expect(chunks).toEqual([]);
    });

    it("invalid_json is a successful invocation whose text is not JSON", async () => {
      const chunks: string[] = [];
      const response = await scripted([{ fault: "invalid_json" }]).invoke(request({ role: "reviewer", onChunk: (t) => chunks.push(t) }));
      expect(response.text).toContain('"decision"');
      expect(() => JSON.parse(response.text)).toThrow(SyntaxError);
      expect(chunks.join("")).toBe(response.text);
    });

    it("oversized streams past the cap in bounded chunks, then fails as a tool error", async () => {
      let total = 0;
      let largest = 0;
      const err = await agentError(
        scripted([{ fault: "oversized" }]).invoke(
          request({
            onChunk: (t) => {
              total += Buffer.byteLength(t);
              largest = Math.max(largest, Buffer.byteLength(t));
            },
          }),
        ),
      );
      expect(err).toMatchObject({ errorClass: "tool_error", retryable: false });
      expect(err.message).toContain(`output exceeded ${MAX_AGENT_OUTPUT_BYTES} bytes`);
      expect(total).toBeGreaterThan(MAX_AGENT_OUTPUT_BYTES);
      expect(largest).toBeLessThanOrEqual(64 * 1024);
      expect(err.partialOutput.length).toBeGreaterThan(0);
      expect(err.partialOutput.length).toBeLessThanOrEqual(4 * 1024);
    });

    it("oversized stops at once on cancel", async () => {
      const abort = new AbortController();
      let total = 0;
      const err = await agentError(
        scripted([{ fault: "oversized" }]).invoke(
          request({
            signal: abort.signal,
            onChunk: (t) => {
              total += t.length;
              if (total >= 128 * 1024) abort.abort();
            },
          }),
        ),
      );
      expect(err.errorClass).toBe("cancelled");
      expect(total).toBe(128 * 1024);
    });
  });

  describe("cancel", () => {
    it("aborting during chunk delays fails cancelled within 100 ms, with what had streamed", async () => {
      const abort = new AbortController();
      const chunks: string[] = [];
      const agent = scripted([{ reply: "a fairly long reply that streams slowly, chunk by chunk", chunkDelayMs: 1_000 }]);
      setTimeout(() => abort.abort(), 50);
      const started = Date.now();
      const err = await agentError(agent.invoke(request({ signal: abort.signal, onChunk: (t) => chunks.push(t) })));
      const abortedAfter = Date.now() - started - 50;
      expect(err).toMatchObject({ errorClass: "cancelled", retryable: false, partialOutput: "" });
      expect(abortedAfter).toBeLessThan(100);
      expect(chunks).toEqual([]);
    });

    it("keeps the chunks that streamed before the cancel as partial output", async () => {
      const abort = new AbortController();
      const chunks: string[] = [];
      const agent = scripted([{ reply: "one two three four five six seven eight nine ten", chunkDelayMs: 10 }]);
      const err = await agentError(
        agent.invoke(
          request({
            signal: abort.signal,
            onChunk: (t) => {
              chunks.push(t);
              if (chunks.length === 2) abort.abort();
            },
          }),
        ),
      );
      expect(err.errorClass).toBe("cancelled");
      expect(chunks).toHaveLength(2);
      expect(err.partialOutput).toBe(chunks.join(""));
    });

    it("an already aborted request touches nothing", async () => {
      const abort = new AbortController();
      abort.abort();
      const err = await agentError(scripted([{ reply: "x", files: { "a.txt": "a" } }]).invoke(request({ signal: abort.signal })));
      expect(err.errorClass).toBe("cancelled");
      expect(fs.readdirSync(workspace)).toEqual([]);
    });

    it("a slow reply that runs past the deadline fails as a timeout", async () => {
      const err = await agentError(
        scripted([{ reply: "slow reply that takes its time", chunkDelayMs: 100 }]).invoke(request({ deadline: Date.now() + 150 })),
      );
      expect(err).toMatchObject({ errorClass: "timeout", retryable: true });
      expect(err.partialOutput.length).toBeGreaterThan(0);
    });
  });

  describe("config", () => {
    it("names the problem and where it is", () => {
      const cases: [unknown, RegExp][] = [
        [{ kind: "scripted", id: "c", responses: [] }, /responses/],
        [{ kind: "scripted", id: "c", responses: [{ fault: "meltdown" }] }, /responses\.0/],
        [{ kind: "scripted", id: "c", responses: [{ reply: "x", chunkDelayMs: -1 }] }, /responses\.0/],
        [{ kind: "scripted", id: "c", responses: [{ reply: "x", extra: 1 }] }, /responses\.0/],
        [{ kind: "scripted", id: "", responses: [{ reply: "x" }] }, /id/],
        [{ kind: "telepathy", id: "c" }, /kind/],
      ];
      for (const [config, where] of cases) {
        const parsed = ZAgentConfig.safeParse(config);
        expect(parsed.success, JSON.stringify(config)).toBe(false);
        expect(parsed.error?.issues.map((i) => i.path.join(".")).join(" ")).toMatch(where);
      }
      expect(ZAgentConfig.parse({ kind: "scripted", id: "c", responses: [{ reply: "x" }] })).toEqual({
        kind: "scripted",
        id: "c",
        responses: [{ reply: "x", chunkDelayMs: 0 }],
      });
    });
  });
});
