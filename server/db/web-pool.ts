// The web process's one pg pool, created on first use (never at import, so `next build`
// never connects). Prisma (server/db/prisma.ts) and raw queries (health) share it.
// Cached on globalThis so that dev-mode module reloads do not leak a pool per reload.
import "server-only";
import type pg from "pg";
import { parseEnv, ZWebEnv } from "../env";
import { createPool } from "./pool";

/** Connections of one web process (CATCAFE_WEB_POOL_MAX, default 20). A request that waits
 *  longer than CATCAFE_WEB_POOL_WAIT_MS (default 5 s) for one, or for the database host to
 *  answer, fails as 503 with Retry-After (server/api/errors.ts), never as a 500. */

const cache = globalThis as typeof globalThis & { __catcafeWebPool?: pg.Pool };

export function getWebPool(): pg.Pool {
  if (cache.__catcafeWebPool) return cache.__catcafeWebPool;
  const env = parseEnv(ZWebEnv);
  const pool = createPool(env.DATABASE_URL, env.CATCAFE_WEB_POOL_MAX, {
    applicationName: "catcafe-web",
    connectTimeoutMs: env.CATCAFE_WEB_POOL_WAIT_MS,
  });
  cache.__catcafeWebPool = pool;
  return pool;
}
