// Spans for Cat Cafe's own work (docs/operations.md, "Traces"): one helper that runs a
// function in a span and ends it however the function ends, and the W3C `traceparent` that
// carries a trace from the web process to a runner through a step's events. With tracing
// off (./sdk.ts) the API hands out no-op spans and the propagator writes nothing.
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";
import { APP_VERSION } from "../version";

export { SpanKind, type Span };

export function tracer() {
  return trace.getTracer("catcafe", APP_VERSION);
}

export interface SpanOptions {
  attributes?: Attributes;
  kind?: SpanKind;
  /** The parent; absent: the active context. */
  parent?: Context;
  /** Epoch ms, when the work began before the span could (a claim read back afterwards). */
  startTime?: number;
}

/**
 * Runs `fn` in a new active span. A failure marks the span with status ERROR and `error.type`
 * (the error's class from the taxonomy, else its name), never with its message: messages can
 * quote what an agent printed (docs/operations.md, "What a trace never holds").
 */
export async function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.startTime !== undefined ? { startTime: options.startTime } : {}),
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    markFailed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Status ERROR with the error's class (`error.type`), not its message. */
export function markFailed(span: Span, err: unknown, errorType?: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute("error.type", errorType ?? errorTypeOf(err));
}

function errorTypeOf(err: unknown): string {
  if (err && typeof err === "object") {
    const withClass = err as { errorClass?: unknown; code?: unknown; name?: unknown };
    if (typeof withClass.errorClass === "string") return withClass.errorClass;
    if (typeof withClass.code === "string") return withClass.code;
    if (typeof withClass.name === "string") return withClass.name;
  }
  return "_OTHER";
}

/** The active span's context as a W3C `traceparent`; undefined when there is none (tracing off, no span). */
export function activeTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a recorded `traceparent` continues (a runner's step span's parent); the root when there is none. */
export function contextOfTraceparent(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}
