// The webhook step's executor (server/runner/webhook.ts) against a real HTTP receiver: what it
// posts (JSON, or Slack's {text}), which answers are retried and how long a Retry-After makes
// it wait, and the failures that are not the receiver's answer (refused, redirected, no answer,
// cancelled), each recorded as its class only (unreachable, refused, http_error and the
// status), never in the receiver's words; a receiver on a non-public address only with the
// admin's access.privateHosts, reached at the address that was checked. inbox.int.test.ts runs
// it inside a session, outbound.int.test.ts with the settings; here each answer is one case.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StepExecutionError } from "../../server/runner/executors";
import type { Resolve } from "../../server/net/hosts";
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
let answer: { status: number; headers?: Record<string, string>; delayMs?: number; body?: string } = { status: 204 };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: JSON.parse(text || "null") });
      // A receiver that hangs up without an answer (the remote's words would be "other side closed").
      if (req.url === "/hang-up") {
        req.socket.destroy();
        return;
      }
      // A receiver that moved: the redirect must not be followed.
      if (req.url === "/moved") {
        res.writeHead(307, { location: "/landing" });
        res.end();
        return;
      }
      setTimeout(() => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? "ok");
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

/** The receiver, on 127.0.0.1: allowed by the admin's access.privateHosts unless a case says otherwise. */
const hookAt = (path: string, privateHosts: string[] = ["127.0.0.1"]): Webhook => ({ url: `${base}${path}`, format: "json", privateHosts });

function deliver(
  hook: Webhook | null,
  options: { stepInput?: unknown; signal?: AbortSignal; requestTimeoutMs?: number; resolve?: Resolve } = {},
) {
  const { execute } = webhookStepKind({
    webhookFor: async (projectId) => (projectId === "cats" ? hook : null),
    publicUrl: "https://cats.example/",
    requestTimeoutMs: options.requestTimeoutMs,
    ...(options.resolve ? { resolve: options.resolve } : {}),
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
    expect(await deliver(hookAt("/hook"))).toEqual({ delivered: true, status: 200 });
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
    const err = await failure(deliver(hookAt("/hook"), { stepInput: { projectId: "cats" } }));
    expect(err).toMatchObject({ errorClass: "tool_error", retryable: false });
    expect(err.message).toMatch(/^invalid webhook input: /);
  });

  it("a server error is retried, recorded as http_error with the status only", async () => {
    for (const status of [500, 503]) {
      answer = { status, body: "upstream db-7.internal timed out" };
      const err = await failure(deliver(hookAt("/hook")));
      expect(err).toMatchObject({
        errorClass: "provider_network_error",
        retryable: true,
        message: `webhook not delivered: http_error ${status}`,
        retryAfterMs: undefined,
      });
    }
  });

  it("429 and 408 are retried; a Retry-After is waited (at most five minutes)", async () => {
    answer = { status: 429, headers: { "retry-after": "7" } };
    expect(await failure(deliver(hookAt("/hook")))).toMatchObject({ retryable: true, retryAfterMs: 7_000 });
    answer = { status: 429, headers: { "retry-after": "86400" } };
    expect(await failure(deliver(hookAt("/hook")))).toMatchObject({ retryAfterMs: 300_000 });
    answer = { status: 408, headers: { "retry-after": "soon" } };
    expect(await failure(deliver(hookAt("/hook")))).toMatchObject({
      errorClass: "provider_network_error",
      retryable: true,
      retryAfterMs: undefined,
    });
  });

  it("any other refusal is not retried, and says so with its status, not the receiver's body", async () => {
    for (const status of [401, 404]) {
      answer = { status, body: "Unauthorized: token T0KEN-xyz is not valid for /admin" };
      const err = await failure(deliver(hookAt("/hook")));
      expect(err).toMatchObject({
        errorClass: "tool_error",
        retryable: false,
        message: `webhook not delivered: http_error ${status} (not retried: the receiver refuses this request)`,
      });
    }
  });

  it("a redirect is not followed (the URL's token would go elsewhere): http_error with its status, not retried", async () => {
    answer = { status: 200 };
    const err = await failure(deliver(hookAt("/moved")));
    expect(err).toMatchObject({
      errorClass: "tool_error",
      retryable: false,
      message: "webhook not delivered: http_error 307 (not retried: the receiver refuses this request)",
    });
    expect(received.at(-1)!.url).toBe("/moved");
    expect(received.some((r) => r.url === "/landing")).toBe(false);
  });

  it("a refused connection, a hang-up and a name that does not resolve are one class, unreachable, retried", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const unreachable = { errorClass: "provider_network_error", retryable: true, message: "webhook not delivered: unreachable" };
    expect(await failure(deliver({ url: `http://127.0.0.1:${port}/hook`, format: "json", privateHosts: ["127.0.0.1"] }))).toMatchObject(
      unreachable,
    );
    expect(await failure(deliver(hookAt("/hang-up")))).toMatchObject(unreachable);
    const nowhere: Resolve = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND hooks.example.test"), { code: "ENOTFOUND" });
    };
    expect(
      await failure(deliver({ url: "http://hooks.example.test/hook", format: "json", privateHosts: [] }, { resolve: nowhere })),
    ).toMatchObject(unreachable);
  });

  it("no answer in time is unreachable too, retried, whether the receiver or the name's lookup is slow", async () => {
    answer = { status: 200, delayMs: 2_000 };
    const unreachable = { errorClass: "provider_network_error", retryable: true, message: "webhook not delivered: unreachable" };
    expect(await failure(deliver(hookAt("/hook"), { requestTimeoutMs: 200 }))).toMatchObject(unreachable);
    const never: Resolve = () => new Promise(() => {});
    const startedAt = Date.now();
    const slowName = { url: "http://hooks.example.test/hook", format: "json" as const, privateHosts: [] };
    expect(await failure(deliver(slowName, { requestTimeoutMs: 200, resolve: never }))).toMatchObject(unreachable);
    expect(Date.now() - startedAt).toBeLessThan(2_000);
  });

  it("an attempt aborted by its runner ends with the runner's reason, not as the receiver's failure", async () => {
    answer = { status: 200, delayMs: 2_000 };
    const abort = new AbortController();
    const reason = new Error("cancelled by an operator");
    setTimeout(() => abort.abort(reason), 100);
    await expect(deliver(hookAt("/hook"), { signal: abort.signal })).rejects.toBe(reason);
  });
});

describe("receivers on non-public addresses", () => {
  it("are refused without the admin's allowance: nothing is sent, not retried, and the message names access.privateHosts", async () => {
    answer = { status: 200 };
    const before = received.length;
    const err = await failure(deliver(hookAt("/hook", [])));
    expect(err).toMatchObject({ errorClass: "tool_error", retryable: false });
    expect(err.message).toBe(
      "webhook not delivered: refused: its host is on a loopback, link-local or private address; an admin can allow it in access.privateHosts",
    );
    // A rule for another host, or for another port of this one, is no allowance either.
    expect(await failure(deliver(hookAt("/hook", ["10.1.2.3", "127.0.0.1:1"])))).toMatchObject({ retryable: false });
    expect(received.length).toBe(before);
  });

  it("a name is judged by the address it resolves to when the delivery runs, and the POST goes to that address", async () => {
    answer = { status: 200 };
    const port = new URL(base).port;
    const toLoopback: Resolve = async () => ["127.0.0.1"];
    const before = received.length;
    // Public when it was saved, private now: refused, nothing sent.
    const hook = (privateHosts: string[]): Webhook => ({ url: `http://hooks.example.test:${port}/named`, format: "json", privateHosts });
    expect(await failure(deliver(hook([]), { resolve: toLoopback }))).toMatchObject({ retryable: false });
    expect(received.length).toBe(before);
    // Allowed by name: delivered — to the checked address (the name has no DNS record: no second lookup).
    expect(await deliver(hook(["hooks.example.test"]), { resolve: toLoopback })).toEqual({ delivered: true, status: 200 });
    expect(received.at(-1)!.url).toBe("/named");
  });
});
