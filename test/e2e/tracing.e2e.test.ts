// Traces from a live `npm start` (docs/operations.md, "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT
// set, the Next.js server starts the SDK from instrumentation.ts and its runner from main.ts;
// a command sent over HTTP and the step it schedules are one trace across the two processes,
// received by an OTLP/HTTP receiver in this test, without the prompt.
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCatCafeClient, createTokenWithPassword } from "../../lib/client";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    scopeSpans: { spans: { traceId: string; spanId: string; name: string; attributes: { key: string; value: OtlpValue }[] }[] }[];
  }[];
}

const bodies: string[] = [];
const receiver = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (d: Buffer) => parts.push(d));
  req.on("end", () => {
    if (req.url === "/v1/traces") bodies.push(Buffer.concat(parts).toString("utf8"));
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end("{}");
  });
});

function spans() {
  return bodies.flatMap((body) =>
    (JSON.parse(body) as OtlpExport).resourceSpans.flatMap((rs) => {
      const service = rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue;
      return rs.scopeSpans.flatMap((ss) =>
        ss.spans.map((s) => ({
          ...s,
          service,
          attr: Object.fromEntries(s.attributes.map((a) => [a.key, a.value.stringValue ?? a.value.intValue])),
        })),
      );
    }),
  );
}

let server: LiveServer;
beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const { port } = receiver.address() as AddressInfo;
  server = await startLiveServer("tracing", { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: "200" });
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await server?.stop();
  await new Promise((r) => receiver.close(r));
});

describe("traces from npm start", () => {
  it("a task started over HTTP and its first step on the runner are one trace from catcafe-web to catcafe-runner", async () => {
    const { token } = await createTokenWithPassword({ url: server.url, email: server.admin.email, password: server.admin.password });
    const client = createCatCafeClient({ url: server.url, token });
    const prompt = `Fix sum() ${crypto.randomUUID()}`;
    const { sessionId } = await client.tasks.start.mutate({ projectId: "demo", prompt, mode: "proposal" });

    let step: ReturnType<typeof spans>[number] | undefined;
    for (let i = 0; i < 300 && !step; i++) {
      step = spans().find((s) => s.attr["catcafe.session.id"] === sessionId && s.name.startsWith("step "));
      if (!step) await new Promise((r) => setTimeout(r, 100));
    }
    const command = spans().find((s) => s.name === "command tasks.start");
    expect(command?.service).toBe("catcafe-web");
    expect(step?.service).toBe("catcafe-runner");
    expect(step?.traceId).toBe(command?.traceId);
    expect(bodies.join("\n")).not.toContain(prompt);
    expect(bodies.join("\n")).not.toContain(token);
  });
});
