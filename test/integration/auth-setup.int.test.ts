// First admin without touching the database: the one-time setup link (works once, expires,
// only the latest counts, stored hashed) and ADMIN_EMAIL / ADMIN_PASSWORD at start.
import { beforeAll, describe, expect, it } from "vitest";
import { bootstrapAccess } from "../../server/auth/bootstrap";
import { completeSetup, createSetupToken, setupTokenStatus } from "../../server/auth/setup";
import { authorizeCredentials } from "../../server/auth/users";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const APP_URL = "http://localhost:3999";
const admin = { email: "first@cats.test", name: "First Cat", password: "first admin password" };

describe("setup link", () => {
  let db: TestDatabase;
  let api: ApiFixture;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = createApiFixture(db);
  });

  it("works exactly once (even when used twice at the same time), is stored hashed, and ends setup", async () => {
    const stale = await createSetupToken(api.prisma);
    const { token } = await createSetupToken(api.prisma);
    expect(await setupTokenStatus(api.prisma, stale.token)).toBe("invalid"); // replaced by the newer link
    expect(await setupTokenStatus(api.prisma, token)).toBe("valid");
    expect(await setupTokenStatus(api.prisma, undefined)).toBe("invalid");
    expect(await api.dumpDatabase()).not.toContain(token);

    const results = await Promise.allSettled([
      completeSetup(api.prisma, { token, ...admin }),
      completeSetup(api.prisma, { token, ...admin, email: "second@cats.test" }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const rejected = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    // FORBIDDEN (the link is used) or PRECONDITION_FAILED (an admin exists), depending on timing.
    expect(["FORBIDDEN", "PRECONDITION_FAILED"]).toContain(rejected.reason.code);
    const made = (results.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<{ email: string; role: string }>).value;
    expect(made.role).toBe("admin");

    expect((await db.pool.query("SELECT count(*)::int AS n FROM users")).rows[0].n).toBe(1);
    expect(await authorizeCredentials(api.prisma, { email: made.email, password: admin.password })).toMatchObject({
      email: made.email,
      role: "admin",
    });
    await expect(completeSetup(api.prisma, { token, ...admin, email: "again@cats.test" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    await expect(completeSetup(api.prisma, { token: "guessed", ...admin })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
    expect(await setupTokenStatus(api.prisma, token)).toBe("already_set_up");

    // A fresh link cannot make a second "first" admin either.
    const late = await createSetupToken(api.prisma);
    await expect(completeSetup(api.prisma, { token: late.token, ...admin, email: "late@cats.test" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
  });

  it("refuses an expired link and validates the form", async () => {
    const fresh = createApiFixture(await createTestDatabase());
    const expired = await createSetupToken(fresh.prisma, -1000);
    expect(await setupTokenStatus(fresh.prisma, expired.token)).toBe("invalid");
    await expect(completeSetup(fresh.prisma, { token: expired.token, ...admin })).rejects.toMatchObject({ code: "FORBIDDEN" });

    const { token } = await createSetupToken(fresh.prisma);
    const invalid = await completeSetup(fresh.prisma, { token, email: "not an email", name: "", password: "short" }).catch(
      (e: unknown) => e,
    );
    expect((invalid as { name: string }).name).toBe("ZodError");
    expect(await setupTokenStatus(fresh.prisma, token)).toBe("valid"); // a rejected form does not use the link up
  });
});

describe("bootstrapAccess (npm start)", () => {
  it("without ADMIN_* and no users: a setup link on the app's URL; with users: nothing to do", async () => {
    const db = await createTestDatabase();
    const api = createApiFixture(db);
    const result = await bootstrapAccess(db.url, APP_URL, {});
    expect(result.kind).toBe("setup");
    const url = new URL((result as { url: string }).url);
    expect(`${url.origin}${url.pathname}`).toBe(`${APP_URL}/setup`);
    expect(await setupTokenStatus(api.prisma, url.searchParams.get("token") ?? "")).toBe("valid");

    await completeSetup(api.prisma, { token: url.searchParams.get("token") ?? "", ...admin });
    expect(await bootstrapAccess(db.url, APP_URL, {})).toEqual({ kind: "ready", users: 1 });
  });

  it("ADMIN_EMAIL / ADMIN_PASSWORD create the admin, and later starts update its password and restore its role", async () => {
    const db = await createTestDatabase();
    const api = createApiFixture(db);
    const env = { ADMIN_EMAIL: "Boss@Cats.Test", ADMIN_PASSWORD: "boss password one" };
    expect(await bootstrapAccess(db.url, APP_URL, env)).toEqual({ kind: "admin", email: "boss@cats.test", created: true });
    const boss = await authorizeCredentials(api.prisma, { email: "boss@cats.test", password: "boss password one" });
    expect(boss).toMatchObject({ role: "admin", name: "boss" });

    await db.pool.query("UPDATE memberships SET role = 'viewer' WHERE user_id = $1", [boss!.id]);
    await db.pool.query("UPDATE users SET disabled_at = now() WHERE id = $1", [boss!.id]);
    expect(await bootstrapAccess(db.url, APP_URL, { ...env, ADMIN_PASSWORD: "boss password two" })).toEqual({
      kind: "admin",
      email: "boss@cats.test",
      created: false,
    });
    expect(await authorizeCredentials(api.prisma, { email: "boss@cats.test", password: "boss password one" })).toBeNull();
    expect(await authorizeCredentials(api.prisma, { email: "boss@cats.test", password: "boss password two" })).toMatchObject({
      id: boss!.id,
      role: "admin",
    });
  });

  it("refuses a half-set or weak admin environment, naming the variable", async () => {
    const db = await createTestDatabase();
    await expect(bootstrapAccess(db.url, APP_URL, { ADMIN_EMAIL: "a@cats.test" })).rejects.toThrow(
      /ADMIN_PASSWORD: required when ADMIN_EMAIL is set/,
    );
    await expect(bootstrapAccess(db.url, APP_URL, { ADMIN_EMAIL: "a@cats.test", ADMIN_PASSWORD: "short" })).rejects.toThrow(
      /ADMIN_PASSWORD: at least 10 characters/,
    );
  });
});
