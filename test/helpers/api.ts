// Fixtures for API and auth tests: a Prisma client on the test database, users with a role
// (random, unique), tRPC callers acting as them, session cookies signed like next-auth's,
// and the raw text of every table (to prove secrets are stored only hashed).
import crypto from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { encode } from "next-auth/jwt";
import { afterAll } from "vitest";
import type { Role } from "../../lib/roles";
import type { ApiDeps, ContextSource } from "../../server/api/context";
import { createCaller } from "../../server/api/root";
import type { CurrentUser } from "../../server/auth/request";
import { createUser } from "../../server/auth/users";
import { PrismaClient } from "../../server/db/generated/client";
import type { TestDatabase } from "./db";

export const TEST_SECRET = "test-nextauth-secret-0123456789abcdef";

export interface ApiFixture {
  prisma: PrismaClient;
  deps: ApiDeps;
  source: () => ContextSource;
  /** A new user with `role` (password: `password`) as a session-authenticated caller. */
  user(role: Role, fields?: { email?: string; password?: string }): Promise<CurrentUser & { password: string }>;
  caller(user: CurrentUser | null): ReturnType<typeof createCaller>;
  /** A `Cookie` header value holding a next-auth session for `userId` (`claims`: the token as next-auth made it). */
  sessionCookie(userId: string, secret?: string, claims?: Record<string, unknown>): Promise<string>;
  /** Every row of every table in the public schema, as text. */
  dumpDatabase(): Promise<string>;
}

export function createApiFixture(db: TestDatabase): ApiFixture {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: db.url, max: 5 }) });
  afterAll(async () => {
    await prisma.$disconnect();
  });
  const deps: ApiDeps = { prisma, pool: db.pool, store: db.store };
  return {
    prisma,
    deps,
    source: () => ({ deps, secret: TEST_SECRET }),
    async user(role, fields = {}) {
      const password = fields.password ?? `pw-${crypto.randomBytes(9).toString("base64url")}`;
      const created = await createUser(
        deps,
        { email: fields.email ?? `${role}-${crypto.randomUUID()}@cats.test`, name: `Test ${role}`, password, role },
        { kind: "system", id: "test" },
      );
      return { id: created.id, email: created.email, name: created.name, role: created.role, via: "session", password };
    },
    caller(user) {
      return createCaller({ ...deps, user });
    },
    async sessionCookie(userId, secret = TEST_SECRET, claims = {}) {
      const jwt = await encode({ token: { ...claims, sub: userId }, secret });
      return `next-auth.session-token=${jwt}`;
    },
    async dumpDatabase() {
      const tables = await db.pool.query<{ tablename: string }>(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
      );
      const parts: string[] = [];
      for (const { tablename } of tables.rows) {
        const rows = await db.pool.query<{ row: string }>(`SELECT t::text AS row FROM "${tablename}" t`);
        parts.push(...rows.rows.map((r) => r.row));
      }
      return parts.join("\n");
    },
  };
}

/** Calls `path` ("tasks.start") on a caller, for table-driven tests over every procedure. */
export function callPath(caller: ReturnType<typeof createCaller>, path: string, input: unknown): Promise<unknown> {
  const fn = path.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller);
  return (fn as (input: unknown) => Promise<unknown>)(input);
}

/** The tRPC error code a call failed with, or "OK". */
export async function outcomeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "OK";
  } catch (err) {
    return (err as { code?: string }).code ?? `not a tRPC error: ${String(err)}`;
  }
}
