// HTTP brains against stand-in providers on 127.0.0.1: streaming, every failure class of
// the taxonomy, cancel and deadline reaching the server, the API key kept to its header, and
// the stub's loopback host reached only with the admin's access.privateHosts.
import crypto from "node:crypto";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAgent } from "../../server/agents";
import { AgentError, MAX_AGENT_OUTPUT_BYTES, type AgentRequest } from "../../server/agents/types";
import { checkBrain, type CheckBrainOptions } from "../../server/agents/brain-check";
import { freePort } from "../helpers/ports";
import {
  deltasOf,
  sendError,
  startBrainStub,
  startEventStream,
  streamOf,
  STUB_PRIVATE_HOSTS,
  wallClock,
  writeStream,
  type BrainStub,
  type Provider,
} from "../helpers/brains-stub";

const KEY_ENV = "CATCAFE_TEST_BRAIN_API_KEY";
// Not shaped like a provider key, so only the exact-secret redaction can hide it.
const KEY = `key_${crypto.randomBytes(12).toString("hex")}`;

let stub: BrainStub;
beforeAll(async () => {
  process.env[KEY_ENV] = KEY;
  stub = await startBrainStub();
});
afterAll(async () => {
  delete process.env[KEY_ENV];
  await stub.close();
});
afterEach(() => {
  stub.requests.length = 0;
});

function brain(provider: Provider, extra: Record<string, unknown> = {}) {
  return createAgent({
    kind: provider,
    id: `stub-${provider}`,
    baseUrl: stub.url,
    model: "stub-model",
    apiKeyEnv: KEY_ENV,
    temperature: 0.2,
    maxTokens: 256,
    systemPrompt: "Answer briefly.",
    ...extra,
  } as Parameters<typeof createAgent>[0]);
}

function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: "reviewer",
    prompt: "Review the change.",
    context: [
      { from: "operator", text: "Fix sum()." },
      { from: "coder", text: "Changed it to add." },
      { from: "reviewer", text: "An earlier review." },
    ],
    workspace: os.tmpdir(),
    invocation: 0,
    signal: new AbortController().signal,
    deadline: Date.now() + 10_000,
    // What a runner hands the call when the admin allows the stub's host.
    privateHosts: STUB_PRIVATE_HOSTS,
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<AgentError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "the call should have failed").toBeInstanceOf(AgentError);
  return err as AgentError;
}

/** The server saw the connection close, and when. */
async function closedAt(index = 0, timeoutMs = 2_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const at = stub.requests[index]?.closedAt;
    if (at) return at;
    await sleep(5);
  }
  throw new Error("the server never saw the request close");
}

function expectNoKey(err: AgentError) {
  expect(err.message).not.toContain(KEY);
  expect(err.partialOutput).not.toContain(KEY);
  expect(JSON.stringify(err)).not.toContain(KEY);
}

describe.each(["openai", "anthropic"] as const)("%s brain over HTTP", (provider) => {
  const chunks = ["Hel", "lo, ", "wor", "ld! ", "ünï©ødé 🐱"];

  it("streams chunks in order as they arrive, returns their concatenation and the usage, and sends the key only in its header", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      // 7-byte pieces: lines, JSON and multi-byte characters are split across reads.
      await writeStream(res, streamOf(provider, chunks, { input: 11, output: 5 }), { pieceBytes: 7, delayMs: 1 });
    });
    const seen: string[] = [];
    const response = await brain(provider).invoke(request({ onChunk: (c) => seen.push(c) }));
    expect(seen).toEqual(chunks);
    expect(response.text).toBe(chunks.join(""));
    expect(response.usage).toEqual({ inputTokens: 11, outputTokens: 5 });

    const [req] = stub.requests;
    expect(req!.method).toBe("POST");
    expect(req!.url).toBe(provider === "openai" ? "/v1/chat/completions" : "/v1/messages");
    if (provider === "openai") {
      expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(req!.headers["x-api-key"]).toBeUndefined();
    } else {
      expect(req!.headers["x-api-key"]).toBe(KEY);
      expect(req!.headers["anthropic-version"]).toBe("2023-06-01");
      expect(req!.headers.authorization).toBeUndefined();
    }
    const keyHeaders = Object.entries(req!.headers).filter(([, v]) => String(v).includes(KEY));
    expect(keyHeaders.map(([k]) => k)).toEqual([provider === "openai" ? "authorization" : "x-api-key"]);
    expect(req!.body).not.toContain(KEY);
    expect(req!.url).not.toContain(KEY);

    const body = JSON.parse(req!.body) as Record<string, unknown>;
    expect(body).toMatchObject({ model: "stub-model", stream: true, temperature: 0.2 });
    const conversation = [
      { role: "user", content: "[operator] Fix sum().\n\n[coder] Changed it to add." },
      { role: "assistant", content: "An earlier review." },
      { role: "user", content: "Review the change." },
    ];
    if (provider === "openai") {
      expect(body).toMatchObject({ max_tokens: 256, stream_options: { include_usage: true } });
      expect(body.messages).toEqual([{ role: "system", content: "Answer briefly." }, ...conversation]);
    } else {
      expect(body).toMatchObject({
        max_tokens: 256,
        system: [{ type: "text", text: "Answer briefly.", cache_control: { type: "ephemeral" } }],
      });
      // The thread ends with this role's own turn: the third cache breakpoint is at its end.
      expect(body.messages).toEqual([
        conversation[0],
        { role: "assistant", content: [{ type: "text", text: "An earlier review.", cache_control: { type: "ephemeral" } }] },
        conversation[2],
      ]);
    }
  });

  it("sends the prompt's stable part first, before the thread; Anthropic marks it, the thread's end and the system prompt for its cache, never the changing part", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      await writeStream(res, streamOf(provider, ["ok"], { input: 11, output: 5 }));
    });
    const stable = "Task:\nFix sum().\n\nThe pipeline's artifacts so far:\n--- .forge/prd.md ---\n# PRD\n";
    const changing = "\nReview the change (diff below).\n\nThe change under review (git diff):\n+ a + b";
    const ask = (prompt: string) => brain(provider).invoke(request({ prompt, promptStableChars: stable.length }));
    await ask(stable + changing);
    await ask(`${stable}\nReview the change again, iteration 2.`);
    const bodies = stub.requests.map(
      (r) => JSON.parse(r.body) as { messages: Array<{ role: string; content: unknown }>; system?: unknown },
    );
    expect(bodies).toHaveLength(2);
    for (const body of bodies) {
      if (provider === "anthropic") {
        expect(body.system).toEqual([{ type: "text", text: "Answer briefly.", cache_control: { type: "ephemeral" } }]);
        // The stable part is the first block of the first turn, marked; the thread follows unmarked.
        expect(body.messages[0]).toEqual({
          role: "user",
          content: [
            { type: "text", text: stable, cache_control: { type: "ephemeral" } },
            { type: "text", text: "\n\n[operator] Fix sum().\n\n[coder] Changed it to add." },
          ],
        });
        // The thread's end (here this role's own turn) is the third breakpoint.
        expect(body.messages[1]).toEqual({
          role: "assistant",
          content: [{ type: "text", text: "An earlier review.", cache_control: { type: "ephemeral" } }],
        });
        // Three breakpoints of Anthropic's four, none after the thread.
        expect(JSON.stringify(body).split("cache_control").length - 1).toBe(3);
      } else {
        expect(body.messages[1]).toEqual({ role: "user", content: `${stable}\n\n[operator] Fix sum().\n\n[coder] Changed it to add.` });
        expect(JSON.stringify(body)).not.toContain("cache_control");
      }
    }
    // The changing part is the last turn, unmarked.
    expect(bodies[0]!.messages.at(-1)).toEqual({ role: "user", content: changing });
    expect(bodies[1]!.messages.at(-1)).toEqual({ role: "user", content: "\nReview the change again, iteration 2." });
    // Both requests are byte-identical up to the end of the thread.
    const upToThread = (body: (typeof bodies)[number]) => JSON.stringify({ system: body.system, messages: body.messages.slice(0, -1) });
    expect(upToThread(bodies[1]!)).toBe(upToThread(bodies[0]!));
  });

  it("the thread's end inside a user turn: that turn is cut there, the part up to it marked, this call's instruction after it unmarked", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      await writeStream(res, streamOf(provider, ["ok"], { input: 11, output: 5 }));
    });
    const stable = "Task:\nFix sum().\n";
    const changing = "\nReview the change.";
    await brain(provider).invoke(
      request({ prompt: stable + changing, promptStableChars: stable.length, context: [{ from: "coder", text: "Changed it to add." }] }),
    );
    const body = JSON.parse(stub.requests[0]!.body) as { messages: Array<{ role: string; content: unknown }> };
    if (provider === "anthropic") {
      const mark = { cache_control: { type: "ephemeral" } };
      expect(body.messages).toEqual([
        {
          role: "user",
          content: [
            { type: "text", text: stable, ...mark },
            { type: "text", text: "\n\n[coder] Changed it to add.", ...mark },
            { type: "text", text: `\n\n${changing}` },
          ],
        },
      ]);
    } else {
      expect(body.messages).toEqual([
        { role: "system", content: "Answer briefly." },
        { role: "user", content: `${stable}\n\n[coder] Changed it to add.\n\n${changing}` },
      ]);
    }
  });

  it("reports the input tokens read from (and, for Anthropic, written to) the prompt cache, part of the input", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      await writeStream(
        res,
        streamOf(provider, ["ok"], { input: 5000, output: 20, cached: 4096, ...(provider === "anthropic" ? { cacheWrite: 600 } : {}) }),
      );
    });
    const response = await brain(provider).invoke(request());
    expect(response.usage).toEqual({
      inputTokens: 5000,
      outputTokens: 20,
      cachedInputTokens: 4096,
      ...(provider === "anthropic" ? { cacheCreationInputTokens: 600 } : {}),
    });
  });

  it("parses CRLF line endings split between reads", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      await writeStream(
        res,
        streamOf(provider, chunks).map((e) => e.replaceAll("\n", "\r\n")),
        { pieceBytes: 3 },
      );
    });
    const response = await brain(provider).invoke(request());
    expect(response.text).toBe(chunks.join(""));
    expect(response.usage === undefined || response.usage.outputTokens === 0).toBe(true);
  });

  it("401: provider_auth_error, not retried, and the key the provider echoed is not in the message", async () => {
    stub.handle((_req, res) => sendError(res, provider, 401, `Incorrect API key provided: ${KEY}. Also sk-ab12***********wxyz.`));
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("provider_auth_error");
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/HTTP 401/);
    expect(err.message).toContain("[redacted]");
    expect(err.message).not.toContain("sk-ab12");
    expectNoKey(err);
  });

  it("429 with Retry-After in seconds: provider_rate_limit, retryable, retryAfterMs", async () => {
    stub.handle((_req, res) => sendError(res, provider, 429, "Too many requests", { "retry-after": "2" }));
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("provider_rate_limit");
    expect(err.retryable).toBe(true);
    expect(err.retryAfterMs).toBe(2000);
    expectNoKey(err);
  });

  it("429 with Retry-After as an HTTP date", async () => {
    const at = new Date(Date.now() + 5_000).toUTCString();
    stub.handle((_req, res) => sendError(res, provider, 429, "slow down", { "retry-after": at }));
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("provider_rate_limit");
    expect(err.retryAfterMs).toBeGreaterThan(3_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(5_000);
  });

  it("429 for an exhausted quota or spend limit is not retried", async () => {
    stub.handle((_req, res) =>
      provider === "openai"
        ? sendError(res, provider, 429, "You exceeded your current quota", {}, "insufficient_quota")
        : (res.writeHead(429, { "content-type": "application/json" }),
          res.end(
            JSON.stringify({
              type: "error",
              error: { type: "rate_limit_error", message: "spend limit", details: { error_code: "enforced_spend_limit_reached" } },
            }),
          )),
    );
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("provider_rate_limit");
    expect(err.retryable).toBe(false);
  });

  it("500: provider_network_error, retryable", async () => {
    stub.handle((_req, res) => sendError(res, provider, 500, "internal failure"));
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("provider_network_error");
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/HTTP 500/);
  });

  it("404 (unknown model): provider_auth_error, not retried", async () => {
    stub.handle((_req, res) => sendError(res, provider, 404, "The model `stub-model` does not exist", {}, "model_not_found"));
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("provider_auth_error");
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/model or endpoint not found/);
  });

  it("400: tool_error with the provider's reason, not retried", async () => {
    stub.handle((_req, res) => sendError(res, provider, 400, "max_tokens is too large"));
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("tool_error");
    expect(err.retryable).toBe(false);
    expect(err.message).toContain("max_tokens is too large");
  });

  it("a redirect is not followed (the key would go along): tool_error", async () => {
    stub.handle((_req, res) => {
      res.writeHead(307, { location: "http://127.0.0.1:9/elsewhere" });
      res.end();
    });
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("tool_error");
    expect(err.message).toMatch(/redirect/);
    expect(stub.requests).toHaveLength(1);
  });

  it("a slow stream past the deadline: timeout with the partial output, and the request is aborted", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      await writeStream(res, deltasOf(provider, ["slow "]), { end: false });
      await sleep(5_000);
      await writeStream(res, deltasOf(provider, ["too late"]));
    });
    const startedAt = Date.now();
    const err = await failure(brain(provider).invoke(request({ deadline: Date.now() + 400 })));
    expect(err.errorClass).toBe("timeout");
    expect(err.retryable).toBe(true);
    expect(err.partialOutput).toBe("slow ");
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(await closedAt()).toBeLessThan(wallClock() + 1);
  });

  it("no answer at all before the deadline: timeout", async () => {
    stub.handle(async (_req, res) => {
      await sleep(3_000);
      res.end();
    });
    const err = await failure(brain(provider).invoke(request({ deadline: Date.now() + 300 })));
    expect(err.errorClass).toBe("timeout");
  });

  it("a disconnect mid-stream: provider_network_error with the partial output, never schema_invalid", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      await writeStream(res, deltasOf(provider, ["Hello, ", "wor"]), { end: false });
      await sleep(50);
      res.socket?.destroy();
    });
    const seen: string[] = [];
    const err = await failure(brain(provider).invoke(request({ onChunk: (c) => seen.push(c) })));
    expect(err.errorClass).toBe("provider_network_error");
    expect(err.errorClass).not.toBe("schema_invalid");
    expect(err.retryable).toBe(true);
    expect(err.partialOutput).toBe("Hello, wor");
    expect(seen).toEqual(["Hello, ", "wor"]);
    expect(err.message).toMatch(/lost after 10 characters/);
  });

  it("a stream that ends cleanly but before the answer is complete: provider_network_error", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      await writeStream(res, deltasOf(provider, ["half an ans"]));
    });
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("provider_network_error");
    expect(err.partialOutput).toBe("half an ans");
  });

  it("invalid JSON in the stream: tool_error, and the request is aborted", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      const broken = provider === "openai" ? 'data: {"choices": [oops\n\n' : "event: content_block_delta\ndata: {oops\n\n";
      await writeStream(res, [...deltasOf(provider, ["fine so far"]), broken], { end: false });
      await sleep(5_000);
      res.end();
    });
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("tool_error");
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/invalid JSON/);
    expect(err.partialOutput).toBe("fine so far");
    await closedAt();
  });

  it("an error event mid-stream (overloaded): provider_rate_limit, retryable", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      const error =
        provider === "openai"
          ? `data: ${JSON.stringify({ error: { message: "The server is overloaded", type: "server_error", code: "server_error" } })}\n\n`
          : `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`;
      await writeStream(res, [...deltasOf(provider, ["partial "]), error]);
    });
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("provider_rate_limit");
    expect(err.retryable).toBe(true);
    expect(err.partialOutput).toBe("partial ");
  });

  it("output beyond the limit: tool_error, and the request is aborted", async () => {
    const piece = "x".repeat(16 * 1024);
    const pieces = Math.ceil(MAX_AGENT_OUTPUT_BYTES / piece.length) + 4;
    stub.handle(async (_req, res) => {
      startEventStream(res);
      for (let i = 0; i < pieces && !res.destroyed; i++) {
        const ok = res.write(deltasOf(provider, [piece])[0]);
        if (!ok) await new Promise((r) => setTimeout(r, 1));
      }
      if (!res.destroyed) {
        await sleep(5_000);
        res.end();
      }
    });
    const err = await failure(brain(provider).invoke(request()));
    expect(err.errorClass).toBe("tool_error");
    expect(err.message).toMatch(/exceeded/);
    expect(err.partialOutput.length).toBeLessThanOrEqual(4 * 1024);
    await closedAt();
  });

  it("cancel: cancelled, and the server sees the request aborted within 100 ms", async () => {
    stub.handle(async (_req, res) => {
      startEventStream(res);
      await writeStream(res, deltasOf(provider, ["first"]), { end: false });
      await sleep(10_000);
      res.end();
    });
    const controller = new AbortController();
    let abortedAt = 0;
    const err = await failure(
      brain(provider).invoke(
        request({
          signal: controller.signal,
          // Later, while the next read is pending: only the abort itself can end it.
          onChunk: () =>
            void sleep(50).then(() => {
              abortedAt = wallClock();
              controller.abort();
            }),
        }),
      ),
    );
    expect(err.errorClass).toBe("cancelled");
    expect(err.partialOutput).toBe("first");
    const closed = await closedAt();
    expect(closed - abortedAt).toBeLessThan(100);
  });

  it("a refused connection: provider_network_error, retryable", async () => {
    const port = await freePort();
    const err = await failure(brain(provider, { baseUrl: `http://127.0.0.1:${port}` }).invoke(request()));
    expect(err.errorClass).toBe("provider_network_error");
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it("a key variable that is not set: provider_auth_error before any request", async () => {
    const err = await failure(brain(provider, { apiKeyEnv: "CATCAFE_TEST_UNSET_API_KEY" }).invoke(request()));
    expect(err.errorClass).toBe("provider_auth_error");
    expect(err.message).toContain("CATCAFE_TEST_UNSET_API_KEY");
    expect(stub.requests).toHaveLength(0);
  });

  it("a host on a loopback address without the admin's allowance: tool_error naming access.privateHosts, no request at all", async () => {
    for (const privateHosts of [undefined, [], ["127.0.0.2"], [`127.0.0.1:${Number(new URL(stub.url).port) + 1}`]]) {
      const err = await failure(brain(provider).invoke(request({ privateHosts })));
      expect(err).toMatchObject({ errorClass: "tool_error", retryable: false });
      expect(err.message).toBe(
        `brain stub-${provider} refused: ${stub.url} is on a loopback, link-local or private address; an admin can allow its host in access.privateHosts`,
      );
    }
    expect(stub.requests).toHaveLength(0);
  });

  it("already cancelled or past the deadline: no request at all", async () => {
    const controller = new AbortController();
    controller.abort();
    expect((await failure(brain(provider).invoke(request({ signal: controller.signal })))).errorClass).toBe("cancelled");
    expect((await failure(brain(provider).invoke(request({ deadline: Date.now() - 1 })))).errorClass).toBe("timeout");
    expect(stub.requests).toHaveLength(0);
  });
});

describe("checkBrain", () => {
  /** A check with the stub's host and the test's key variables allowed, as the project's access in force would. */
  const check = (input: Parameters<typeof checkBrain>[0], options: CheckBrainOptions = {}) =>
    checkBrain(input, { privateHosts: STUB_PRIVATE_HOSTS, keyPolicy: { allowed: ["CATCAFE_TEST_*"] }, ...options });
  const openai = (extra: Record<string, unknown> = {}) => ({
    kind: "openai" as const,
    id: "check-openai",
    baseUrl: `${stub.url}/v1`,
    model: "stub-model",
    apiKeyEnv: KEY_ENV,
    ...extra,
  });
  const anthropic = (extra: Record<string, unknown> = {}) => ({
    kind: "anthropic" as const,
    id: "check-anthropic",
    baseUrl: stub.url,
    model: "stub-model",
    apiKeyEnv: KEY_ENV,
    ...extra,
  });
  const listing = (ids: string[], headers: Record<string, string> = {}) =>
    stub.handle((req, res) => {
      if (req.url !== "/v1/models") return sendError(res, "openai", 404, "no such route");
      res.writeHead(200, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify({ object: "list", data: ids.map((id) => ({ id, object: "model" })) }));
    });

  it("OpenAI-compatible: reachable, key accepted, model listed (Ollama's name:latest too)", async () => {
    listing(["other", "stub-model"], { "x-ratelimit-limit-requests": "500" });
    const result = await check(openai());
    expect(result).toMatchObject({
      ok: true,
      connectivity: "ok",
      auth: "ok",
      modelExists: true,
      rateLimit: { minIntervalMs: 2000, providerRequestsPerMinute: 500, warning: null },
    });
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(stub.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    listing(["llama3:latest"]);
    expect((await check(openai({ model: "llama3" }))).modelExists).toBe(true);
  });

  it("OpenAI-compatible: a model the server does not list", async () => {
    listing(["other"]);
    const result = await check(openai());
    expect(result).toMatchObject({ ok: false, connectivity: "ok", auth: "ok", modelExists: false });
    expect(result.message).toMatch(/not among the models/);
  });

  it("a rate limit looser than the provider's is flagged", async () => {
    listing(["stub-model"], { "x-ratelimit-limit-requests": "10" });
    const result = await check(openai({ rateLimit: { minIntervalMs: 1000 } }));
    expect(result.ok).toBe(false);
    expect(result.rateLimit.warning).toMatch(/use at least 6000/);
  });

  it("a refused key, with the key nowhere in the result", async () => {
    stub.handle((_req, res) => sendError(res, "openai", 401, `Incorrect API key provided: ${KEY}`));
    const result = await check(openai());
    expect(result).toMatchObject({ ok: false, connectivity: "ok", auth: "rejected", modelExists: null });
    expect(JSON.stringify(result)).not.toContain(KEY);
  });

  it("Anthropic: looks the model up by name", async () => {
    stub.handle((req, res) => {
      if (req.headers["x-api-key"] !== KEY) return sendError(res, "anthropic", 401, "invalid x-api-key");
      if (req.url === "/v1/models/stub-model") {
        res.writeHead(200, { "content-type": "application/json", "anthropic-ratelimit-requests-limit": "50" });
        return res.end(JSON.stringify({ id: "stub-model", type: "model", display_name: "Stub" }));
      }
      sendError(res, "anthropic", 404, "model not found", {}, "not_found_error");
    });
    expect(await check(anthropic())).toMatchObject({
      ok: true,
      auth: "ok",
      modelExists: true,
      rateLimit: { providerRequestsPerMinute: 50 },
    });
    expect(await check(anthropic({ model: "claude-nope" }))).toMatchObject({ ok: false, auth: "ok", modelExists: false });
  });

  it("an unreachable endpoint and a missing key variable", async () => {
    const port = await freePort();
    expect(await check(openai({ baseUrl: `http://127.0.0.1:${port}` }))).toMatchObject({
      ok: false,
      connectivity: "unreachable",
      latencyMs: null,
    });
    listing(["stub-model"]);
    const missing = await check(openai({ apiKeyEnv: "CATCAFE_TEST_UNSET_API_KEY" }));
    expect(missing).toMatchObject({ ok: false, connectivity: "ok", auth: "missing_key" });
    expect(missing.message).toContain("CATCAFE_TEST_UNSET_API_KEY");
  });

  it("a host on a loopback address without the admin's allowance: refused, naming access.privateHosts, and nothing reaches it", async () => {
    listing(["stub-model"]);
    // The key variable is allowed: only the address is in the way.
    const result = await checkBrain(openai(), { keyPolicy: { allowed: ["CATCAFE_TEST_*"] } });
    expect(result).toMatchObject({ ok: false, connectivity: "refused", auth: "unknown", modelExists: null, latencyMs: null });
    expect(result.message).toBe(
      `OpenAI-compatible endpoint at ${stub.url} not checked: 127.0.0.1 is on a loopback, link-local or private address (127.0.0.1); an admin can allow it in the settings (access.privateHosts)`,
    );
    expect(stub.requests).toHaveLength(0);
  });

  it("a slow endpoint: timeout", async () => {
    stub.handle(async (_req, res) => {
      await sleep(2_000);
      res.end();
    });
    expect(await check(openai(), { timeoutMs: 200 })).toMatchObject({ ok: false, connectivity: "timeout" });
  });
});
