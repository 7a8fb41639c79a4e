// A fresh database per test file, cloned from the migrated template (fast, isolated).
import crypto from "node:crypto";
import pg from "pg";
import { afterAll, inject } from "vitest";
import { createPool } from "../../server/db/pool";
import { createAppEventStore } from "../../server/app-store";
import type { EventStore } from "../../server/events/store";
import { AppError, isAppError } from "../../server/errors";

export interface TestDatabase {
  name: string;
  url: string;
  pool: pg.Pool;
  store: EventStore;
}

export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const { adminUrl, urlBase, template } = inject("postgres");
  const name = `t_${crypto.randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const from = options.migrated === false ? "template0" : template;
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${from}`);
  } finally {
    await admin.end();
  }
  const url = `${urlBase}${name}`;
  const pool = createPool(url, 20);
  afterAll(async () => {
    await pool.end();
  });
  return { name, url, pool, store: createAppEventStore(pool) };
}

export function uniqueId(prefix = "s"): string {
  return `${prefix}-${crypto.randomUUID()}`;
}

export const testActor = { kind: "user", id: "tester" } as const;

/** The domain refusal (AppError) `p` rejects with; anything else fails the test. */
export async function rejection(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (isAppError(err)) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}
