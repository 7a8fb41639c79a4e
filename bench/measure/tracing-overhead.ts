// tracing_overhead: what tracing (docs/operations.md, "Traces") costs a step. The same round
// trip as metrics_overhead (bench/lib/step-round-trip.ts), blocks alternating between the
// OpenTelemetry SDK started — exporting every span in batches over OTLP/HTTP to a local sink
// that answers 200 — and not started (every span the API's no-op). On, the runner also reads
// each claimed step's traceparent and records its step span. ratio = on / off; target p50
// within 10 %.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { context, propagation, trace } from "@opentelemetry/api";
import { startTracing, stopTracing } from "../../server/tracing/sdk";
import type { Measurement } from "../lib/context";
import { alternatingRoundTrips, onOffFigures } from "../lib/step-round-trip";

const BLOCKS = 20;
const STEPS_PER_BLOCK = 15;

export const tracingOverhead: Measurement = {
  name: "tracing_overhead",
  keys: ["tracing_overhead"],
  async run(ctx) {
    let exports = 0;
    const sink = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        exports++;
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    const toggle = async (on: boolean) => {
      if (on) {
        startTracing("catcafe-bench");
        return;
      }
      await stopTracing();
      // The API's globals back to no-ops, so the next start registers afresh.
      trace.disable();
      context.disable();
      propagation.disable();
    };
    try {
      const samples = await alternatingRoundTrips(ctx, "tracing", toggle, BLOCKS, STEPS_PER_BLOCK);
      const { figures, means } = onOffFigures(samples);
      ctx.note("tracing_overhead", { blocks: BLOCKS, steps_per_block: STEPS_PER_BLOCK, exports, ...means });
      return { tracing_overhead: figures };
    } finally {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    }
  },
};
