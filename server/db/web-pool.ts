// The web process's one pg pool, created on first use (never at import, so `next build`
// never connects). Prisma (server/db/prisma.ts) and raw queries (health) share it.
// Cached on globalThis so that dev-mode module reloads do not leak a pool per reload.
import "server-only";
import type pg from "pg";
import { parseEnv, ZWebEnv } from "../env";
import { createPool } from "./pool";

/** A page or health check must fail within seconds, not hang on TCP timeouts, when the
 *  database host stops answering. */
const CONNECT_TIMEOUT_MS = 5_000;
const WEB_POOL_MAX = 10;

const cache = globalThis as typeof globalThis & { __catcafeWebPool?: pg.Pool };

export function getWebPool(): pg.Pool {
  if (cache.__catcafeWebPool) return cache.__catcafeWebPool;
  const { DATABASE_URL } = parseEnv(ZWebEnv);
  const pool = createPool(DATABASE_URL, WEB_POOL_MAX, { applicationName: "catcafe-web", connectTimeoutMs: CONNECT_TIMEOUT_MS });
  cache.__catcafeWebPool = pool;
  return pool;
}
