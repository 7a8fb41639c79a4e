// The webhook step's executor (server/runner/webhook.ts) against a real HTTP receiver: what it
// posts (JSON, or Slack's {text}), which answers are retried and how long a Retry-After makes
// it wait, and the failures that are not the receiver's answer (refused, redirected, no answer,
// cancelled). inbox.int.test.ts runs it inside a session; here each answer is one case.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StepExecutionError } from "../../server/runner/executors";
import { webhookBody, webhookStepKind, type Webhook } from "../../server/runner/webhook";
import { claimedStep } from "../helpers/steps";

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

let server: http.Server;
let base: string;
const received: Received[] = [];
/** What the receiver answers next: status and headers. */
let answer: { status: number; headers?: Record<string, string>; delayMs?: number } = { status: 204 };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: JSON.parse(text || "null") });
      // A receiver that moved: the redirect must not be followed.
      if (req.url === "/moved") {
        res.writeHead(307, { location: "/landing" });
        res.end();
        return;
      }
      setTimeout(() => {
        res.writeHead(answer.status, answer.headers);
        res.end("ok");
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const input = { projectId: "cats", iteration: 2, attention: "escalated", state: "reviewing", outcome: null, reason: "loop limit" } as const;

const step = (stepInput: unknown = input) => claimedStep("webhook", stepInput, { sessionId: "s-hooked" });

function deliver(hook: Webhook | null, options: { stepInput?: unknown; signal?: AbortSignal; requestTimeoutMs?: number } = {}) {
  const { execute } = webhookStepKind({
    webhookFor: async (projectId) => (projectId === "cats" ? hook : null),
    publicUrl: "https://cats.example/",
    requestTimeoutMs: options.requestTimeoutMs,
  });
  return execute(step(options.stepInput), { signal: options.signal ?? new AbortController().signal });
}

async function failure(promise: Promise<unknown>): Promise<StepExecutionError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StepExecutionError);
  return err as StepExecutionError;
}

describe("what the receiver gets", () => {
  it("JSON: the event, the session, the input and a link to the session", async () => {
    answer = { status: 200 };
    expect(await deliver({ url: `${base}/hook`, format: "json" })).toEqual({ delivered: true, status: 200 });
    const last = received.at(-1)!;
    expect(last.method).toBe("POST");
    expect(last.headers["content-type"]).toBe("application/json");
    expect(last.headers["user-agent"]).toBe("catcafe-webhook");
    expect(last.body).toEqual({
      event: "session.attention",
      sessionId: "s-hooked",
      ...input,
      url: "https://cats.example/sessions/s-hooked",
    });
  });

  it("Slack: one line of text with what happened, the state or outcome, the reason and the link", () => {
    expect(webhookBody("slack", "s-1", input, "https://cats.example//")).toEqual({
      text: "Cat Cafe: session s-1 (project cats) was escalated to a person (loop limit reached). state reviewing: loop limit <https://cats.example/sessions/s-1|Open it>",
    });
    expect(webhookBody("slack", "s-2", { ...input, attention: "failed", outcome: "failed", reason: null })).toEqual({
      text: "Cat Cafe: session s-2 (project cats) failed and needs a person. outcome failed",
    });
    expect(webhookBody("slack", "s-3", { ...input, attention: "waiting", reason: null })).toEqual({
      text: "Cat Cafe: session s-3 (project cats) waits for a person's confirm. state reviewing",
    });
    expect(webhookBody("json", "s-4", input)).toMatchObject({ url: null });
  });
});

describe("answers and failures", () => {
  it("no webhook any more: nothing is sent, and the step says why", async () => {
    const before = received.length;
    expect(await deliver(null)).toEqual({ delivered: false, reason: "project cats has no webhook any more" });
    expect(received.length).toBe(before);
  });

  it("an input that is not a webhook's fails for good, naming the problem", async () => {
    const err = await failure(deliver({ url: `${base}/hook`, format: "json" }, { stepInput: { projectId: "cats" } }));
    expect(err).toMatchObject({ errorClass: "tool_error", retryable: false });
    expect(err.message).toMatch(/^invalid webhook input: /);
  });

  it("a server error is retried", async () => {
    for (const status of [500, 503]) {
      answer = { status };
      const err = await failure(deliver({ url: `${base}/hook`, format: "json" }));
      expect(err).toMatchObject({
        errorClass: "provider_network_error",
        retryable: true,
        message: `webhook answered HTTP ${status}`,
        retryAfterMs: undefined,
      });
    }
  });

  it("429 and 408 are retried; a Retry-After is waited (at most five minutes)", async () => {
    answer = { status: 429, headers: { "retry-after": "7" } };
    expect(await failure(deliver({ url: `${base}/hook`, format: "json" }))).toMatchObject({ retryable: true, retryAfterMs: 7_000 });
    answer = { status: 429, headers: { "retry-after": "86400" } };
    expect(await failure(deliver({ url: `${base}/hook`, format: "json" }))).toMatchObject({ retryAfterMs: 300_000 });
    answer = { status: 408, headers: { "retry-after": "soon" } };
    expect(await failure(deliver({ url: `${base}/hook`, format: "json" }))).toMatchObject({
      errorClass: "provider_network_error",
      retryable: true,
      retryAfterMs: undefined,
    });
  });

  it("any other refusal is not retried, and says so", async () => {
    answer = { status: 404 };
    expect(await failure(deliver({ url: `${base}/hook`, format: "json" }))).toMatchObject({
      errorClass: "tool_error",
      retryable: false,
      message: "webhook answered HTTP 404 (not retried: the receiver refuses this request)",
    });
  });

  it("a redirect is not followed (the URL's token would go elsewhere): a network failure, retried", async () => {
    answer = { status: 200 };
    const err = await failure(deliver({ url: `${base}/moved`, format: "json" }));
    expect(err).toMatchObject({ errorClass: "provider_network_error", retryable: true });
    expect(err.message).toMatch(/^webhook not delivered: /);
    expect(received.at(-1)!.url).toBe("/moved");
  });

  it("a refused connection is a network failure, retried", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const err = await failure(deliver({ url: `http://127.0.0.1:${port}/hook`, format: "json" }));
    expect(err).toMatchObject({ errorClass: "provider_network_error", retryable: true });
    expect(err.message).toContain("ECONNREFUSED");
  });

  it("no answer in time is a timeout, retried", async () => {
    answer = { status: 200, delayMs: 2_000 };
    expect(await failure(deliver({ url: `${base}/hook`, format: "json" }, { requestTimeoutMs: 200 }))).toMatchObject({
      errorClass: "timeout",
      retryable: true,
      message: "webhook not delivered: no answer in time",
    });
  });

  it("an attempt aborted by its runner ends with the runner's reason, not as the receiver's failure", async () => {
    answer = { status: 200, delayMs: 2_000 };
    const abort = new AbortController();
    const reason = new Error("cancelled by an operator");
    setTimeout(() => abort.abort(reason), 100);
    await expect(deliver({ url: `${base}/hook`, format: "json" }, { signal: abort.signal })).rejects.toBe(reason);
  });
});
