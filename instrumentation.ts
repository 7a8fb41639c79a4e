// Next.js calls `register` once as the web server starts: the OpenTelemetry SDK starts here
// when an OTLP endpoint is set, and only in the Node.js runtime (docs/operations.md, "Traces").
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startTracing } = await import("./server/tracing/sdk");
  startTracing("catcafe-web");
}
