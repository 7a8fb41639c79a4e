// The one Prisma client of the web process: created lazily (first query, not import, so
// `next build` never connects) on the shared web pool through @prisma/adapter-pg, and
// cached on globalThis in development so hot reloads reuse it.
// Server-only: it reads DATABASE_URL and must never be bundled for the browser.
import "server-only";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client";
import { getWebPool } from "./web-pool";

const cache = globalThis as typeof globalThis & { __catcafePrisma?: PrismaClient };
let client: PrismaClient | undefined;

export function getPrisma(): PrismaClient {
  const existing = client ?? cache.__catcafePrisma;
  if (existing) return existing;
  const created = new PrismaClient({ adapter: new PrismaPg(getWebPool()) });
  client = created;
  if (process.env.NODE_ENV !== "production") cache.__catcafePrisma = created;
  return created;
}

export type { PrismaClient };
