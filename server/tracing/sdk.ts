// The OpenTelemetry SDK of one process (the web server or a runner): started only when an
// OTLP endpoint is configured (docs/operations.md, "Traces"); otherwise nothing starts and
// every span is the API's no-op. The exporter, its endpoint, headers and timeouts, the
// sampler and the resource read the standard OTEL_* variables themselves.
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { z } from "zod";
import { APP_VERSION } from "../version";

/** The variables that turn tracing on: either is enough (the OTLP exporter's own names). */
export const TRACING_ENDPOINT_ENV = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] as const;

/** Opt-in: GenAI spans also carry the prompt's size in characters (never its text). */
const ZTracingEnv = z.object({ CATCAFE_TRACE_PROMPT_SIZES: z.enum(["0", "1"]).optional() });

let provider: NodeTracerProvider | null = null;
let promptSizes = false;

/** Whether spans may carry prompt sizes (CATCAFE_TRACE_PROMPT_SIZES=1 with tracing on). */
export function promptSizesRecorded(): boolean {
  return provider !== null && promptSizes;
}

/** Whether this process exports traces: the SDK was started. */
export function tracingOn(): boolean {
  return provider !== null;
}

/** On when an OTLP endpoint is set and the SDK is not disabled (OTEL_SDK_DISABLED=true). */
export function tracingWanted(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  return TRACING_ENDPOINT_ENV.some((name) => (env[name] ?? "").trim() !== "");
}

/**
 * Starts the SDK once for this process when {@link tracingWanted}; `serviceName` unless
 * OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise. Returns
 * whether tracing is on.
 */
export function startTracing(serviceName: string, env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  if (provider) return true;
  if (!tracingWanted(env)) return false;
  const parsed = ZTracingEnv.safeParse(env);
  if (!parsed.success) throw new Error("CATCAFE_TRACE_PROMPT_SIZES must be 0 or 1");
  promptSizes = parsed.data.CATCAFE_TRACE_PROMPT_SIZES === "1";
  const resource = resourceFromAttributes({ "service.name": serviceName, "service.version": APP_VERSION }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  // The async-hooks context manager and the W3C trace-context propagator (traceparent).
  provider.register();
  return true;
}

/** Exports what is still buffered and stops (a process's shutdown; idempotent). */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  provider = null;
  await stopping?.shutdown().catch(() => {});
}

/** Exports what is buffered now, without stopping. */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush().catch(() => {});
}
