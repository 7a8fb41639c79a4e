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
import { percentiles } from "../lib/percentiles";
import { alternatingRoundTrips } from "../lib/step-round-trip";

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
      const on = percentiles(samples.on);
      const off = percentiles(samples.off);
      const round = (n: number) => Math.round(n * 1000) / 1000;
      ctx.note("tracing_overhead", { blocks: BLOCKS, steps_per_block: STEPS_PER_BLOCK, exports, on_mean: on.mean, off_mean: off.mean });
      return {
        tracing_overhead: {
          on_p50_ms: on.p50,
          off_p50_ms: off.p50,
          ratio_p50: round(on.p50 / off.p50),
          on_p99_ms: on.p99,
          off_p99_ms: off.p99,
          ratio_p99: round(on.p99 / off.p99),
          n: on.n + off.n,
        },
      };
    } finally {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    }
  },
};
