// Traces (docs/operations.md, "Traces"): with an OTLP endpoint set, a command sent to the API
// (this process, as the web server) and every step it leads to, run by a real runner process,
// are one trace received by an OTLP/HTTP receiver in this test; the agents' calls are GenAI
// spans with model and tokens; the prompt is nowhere in what is exported. Without the
// endpoint nothing starts: spans are no-ops and no event carries a trace context.
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTaskRestHandlers } from "../../server/api/rest";
import type { CurrentUser } from "../../server/auth/request";
import { flushTracing, startTracing, stopTracing, tracingOn, tracingWanted } from "../../server/tracing/sdk";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import type { BrainStub } from "../helpers/brains-stub";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { spawnRunnerProcess } from "../helpers/runner-process";
import { createHarness, ofType, reviewApprove, testPlan, tempDir, type Harness } from "../helpers/tasks";
import { BRAIN_MODEL, BRAIN_TOKENS, CLI_MODEL, CLI_TOKENS, startUsageBrain, usageProject } from "../helpers/usage";

process.env.CATCAFE_SANDBOX = "off";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: OtlpValue }[];
}
interface OtlpExport {
  resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}
interface ReceivedSpan extends OtlpSpan {
  service: string;
  attr: Record<string, string | number | boolean>;
}

/** An OTLP/HTTP receiver (JSON, as @opentelemetry/exporter-trace-otlp-http sends it): every body as it arrived. */
async function startReceiver(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      if (req.url === "/v1/traces") bodies.push(Buffer.concat(parts).toString("utf8"));
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise((r) => server.close(() => r())) };
}

const valueOf = (v: OtlpValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? ""));

function spansOf(bodies: string[]): ReceivedSpan[] {
  return bodies.flatMap((body) =>
    (JSON.parse(body) as OtlpExport).resourceSpans.flatMap((rs) => {
      const service = String(valueOf(rs.resource.attributes.find((a) => a.key === "service.name")!.value));
      return rs.scopeSpans.flatMap((ss) =>
        ss.spans.map((s) => ({ ...s, service, attr: Object.fromEntries(s.attributes.map((a) => [a.key, valueOf(a.value)])) })),
      );
    }),
  );
}

let db: TestDatabase;
let h: Harness;
let api: ApiFixture;
let admin: CurrentUser;
let operator: CurrentUser;
beforeAll(async () => {
  for (const name of Object.keys(process.env)) if (name.startsWith("OTEL_")) delete process.env[name];
  db = await createTestDatabase();
  h = createHarness(db);
  api = createApiFixture(db);
  admin = await api.user("admin");
  operator = await api.user("operator");
});
afterAll(() => stopTracing());

async function finished(sessionId: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const task = await api.caller(operator).tasks.get({ sessionId });
    if (task.status === "finished") return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`session ${sessionId} did not finish`);
}

describe("tracing off (no OTLP endpoint)", () => {
  it("starts no SDK: spans are no-ops, no event carries a traceparent, the session runs as always", async () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_HEADERS: "k=v" })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1", OTEL_SDK_DISABLED: "true" })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:1/v1/traces" })).toBe(true);
    expect(startTracing("catcafe-web")).toBe(false);
    expect(tracingOn()).toBe(false);
    const span = trace.getTracer("probe").startSpan("probe");
    expect(span.isRecording()).toBe(false);
    span.end();

    await h.project("untraced", {
      coder: [{ reply: "a proposal" }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const runner = await h.startRunner();
    try {
      const { sessionId } = await api.caller(operator).tasks.start({ projectId: "untraced", prompt: "Propose a fix", mode: "proposal" });
      for (let i = 0; i < 300; i++) {
        const log = await db.store.readStream(sessionId);
        if (log.some((e) => e.type === "StepCompleted")) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const log = await db.store.readStream(sessionId);
      expect(log.some((e) => e.type === "StepCompleted")).toBe(true);
      expect(log.filter((e) => e.metadata.traceparent !== undefined)).toEqual([]);
    } finally {
      await runner.stop();
    }
    expect(tracingOn()).toBe(false);
  });
});

describe("tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let brain: BrainStub;
  beforeAll(async () => {
    receiver = await startReceiver();
    brain = await startUsageBrain();
  });
  afterAll(async () => {
    await brain.close();
    await receiver.close();
  });

  it("one trace from the command through every step of the runner process; GenAI spans with model and tokens; no prompt text", async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    expect(startTracing("catcafe-web")).toBe(true);
    const root = tempDir("catcafe-tracing-");
    await api.caller(admin).projects.upsert(usageProject("traced", "Traced", root, brain.url));
    const runnerProcess = spawnRunnerProcess({
      databaseUrl: db.url,
      id: `traced-${crypto.randomUUID().slice(0, 8)}`,
      stateDir: path.join(root, "runners"),
      workspacesRoot: h.workspacesRoot,
      leaseMs: 10_000,
      env: { CATCAFE_SANDBOX: "off", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" },
    });
    const exited = new Promise((r) => runnerProcess.once("exit", r));

    const prompt = `Fix sum() ${crypto.randomUUID()}`;
    const { sessionId } = await api.caller(operator).tasks.start({ projectId: "traced", prompt, mode: "implementation" });
    await finished(sessionId);
    // A command that fails, over tRPC and over REST (an API token's creation traced too): failed spans with the class only.
    const op = api.caller(operator);
    await expect(op.tasks.cancel({ sessionId })).rejects.toThrow();
    const { token } = await op.tokens.create({ name: "tracing" });
    const rest = createTaskRestHandlers(api.source);
    const refused = await rest.cancel(
      new Request(`http://cats.test/api/tasks/${sessionId}/cancel`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: "{}",
      }),
      { params: Promise.resolve({ id: sessionId }) },
    );
    expect(refused.status).toBe(409);
    // SIGTERM: the runner stops and exports what it still holds.
    runnerProcess.kill("SIGTERM");
    await exited;
    await flushTracing();

    const spans = spansOf(receiver.bodies);
    const command = spans.find((s) => s.name === "command tasks.start");
    expect(command?.service).toBe("catcafe-web");
    expect(command?.attr["rpc.method"]).toBe("tasks.start");

    // Every step the session scheduled ran in a span of the runner process, in the command's trace.
    const log = await db.store.readStream(sessionId);
    const stepIds = ofType<{ stepId: string }>(log, "StepScheduled").map((d) => d.stepId);
    expect(stepIds.length).toBeGreaterThanOrEqual(3);
    const stepSpans = spans.filter((s) => s.attr["catcafe.step.id"] !== undefined && s.attr["catcafe.session.id"] === sessionId);
    expect(new Set(stepSpans.map((s) => s.attr["catcafe.step.id"]))).toEqual(new Set(stepIds));
    for (const s of stepSpans) {
      expect(s.service).toBe("catcafe-runner");
      expect(s.traceId).toBe(command!.traceId);
      expect(s.attr["catcafe.step.outcome"]).toBe("completed");
    }
    // The first step hangs under the command itself; the later ones under the step whose outcome scheduled them.
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const first = stepSpans.find((s) => s.attr["catcafe.step.id"] === stepIds[0])!;
    expect(first.parentSpanId).toBe(command!.spanId);
    for (const s of stepSpans) expect(byId.has(s.parentSpanId!)).toBe(true);
    // The scheduled steps' events carry the trace context they were appended in (W3C traceparent).
    for (const e of log.filter((e) => e.type === "StepScheduled"))
      expect(e.metadata.traceparent).toMatch(new RegExp(`^00-${command!.traceId}-[0-9a-f]{16}-01$`));

    // The HTTP brain's call: a GenAI client span with the provider, the model and the tokens it reported.
    const chat = spans.find((s) => s.name === `chat ${BRAIN_MODEL}`);
    expect(chat?.attr).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.system": "openai",
      "gen_ai.request.model": BRAIN_MODEL,
      "gen_ai.usage.input_tokens": BRAIN_TOKENS.inputTokens,
      "gen_ai.usage.output_tokens": BRAIN_TOKENS.outputTokens,
      "server.address": "127.0.0.1",
    });
    expect(chat?.traceId).toBe(command!.traceId);
    // The CLI agent: its call with the usage it reported, and its process with its exit code.
    const cli = spans.find((s) => s.name === "invoke_agent claude-coder");
    expect(cli?.attr).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.id": "claude-coder",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.response.model": CLI_MODEL,
      "gen_ai.usage.input_tokens": CLI_TOKENS.inputTokens,
      "gen_ai.usage.output_tokens": CLI_TOKENS.outputTokens,
      "catcafe.agent.kind": "claude",
    });
    const cliProcess = spans.find((s) => s.parentSpanId === cli?.spanId && s.name === "process claude");
    expect(cliProcess?.attr).toMatchObject({ "process.executable.name": "claude", "process.exit.code": 0 });
    expect(cliProcess?.traceId).toBe(command!.traceId);
    const reviewer = spans.find((s) => s.name === "invoke_agent gpt-reviewer");
    expect(chat?.parentSpanId).toBe(reviewer?.spanId);

    const cancelled = spans.find((s) => s.name === "command tasks.cancel");
    expect(cancelled?.attr["error.type"]).toBe("CONFLICT");
    const overRest = spans.find((s) => s.name === "command POST /api/tasks/:id/cancel");
    expect(overRest?.attr).toMatchObject({ "http.response.status_code": 409, "error.type": "409" });

    // Nothing of the prompt (nor its size, which is opt-in), nor the API token, is exported.
    const exported = receiver.bodies.join("\n");
    expect(exported).not.toContain(token);
    expect(exported).not.toContain(prompt);
    expect(exported).not.toContain("Fix sum()");
    expect(exported).not.toContain("catcafe.prompt.chars");
  });
});
