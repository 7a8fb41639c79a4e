// Sign-in under a password-guessing attack: after the free failures each further failure
// doubles the wait, during which even the right password is refused unchecked; per account
// and per address, in PostgreSQL (so it holds across web processes); every attempt is
// recorded (never the password) and listed for admins only.
import { beforeAll, describe, expect, it } from "vitest";
import { authorizeWithBackoff, FREE_FAILURES } from "../../server/auth/sign-in-limit";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
let api: ApiFixture;
beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
});

describe("sign-in backoff", () => {
  it("50 wrong passwords, then the right one: refused while the wait lasts, accepted once it has passed", async () => {
    const victim = await api.user("operator");
    const outcomes: string[] = [];
    for (let i = 0; i < 50; i++) {
      outcomes.push((await authorizeWithBackoff(api.prisma, { email: victim.email, password: `guess ${i}` }, "198.51.100.7")).outcome);
    }
    expect(outcomes.slice(0, FREE_FAILURES.account)).toEqual(Array(FREE_FAILURES.account).fill("wrong"));
    expect(outcomes.filter((o) => o === "throttled").length).toBeGreaterThan(40);
    const right = await authorizeWithBackoff(api.prisma, { email: victim.email, password: victim.password }, "203.0.113.9");
    expect(right).toMatchObject({ user: null, outcome: "throttled", retryAt: expect.any(Date) });

    // The wait passes (moved back in time here): the right password works, and resets the count.
    await db.pool.query("UPDATE sign_in_attempts SET at = at - interval '1 hour' WHERE email = $1", [victim.email]);
    const later = await authorizeWithBackoff(api.prisma, { email: victim.email, password: victim.password }, "203.0.113.9");
    expect(later).toMatchObject({ outcome: "ok", user: { id: victim.id } });
  });

  it("one address guessing many accounts is slowed down too", async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < FREE_FAILURES.address + 3; i++) {
      outcomes.push((await authorizeWithBackoff(api.prisma, { email: `nobody-${i}@cats.test`, password: "x" }, "192.0.2.44")).outcome);
    }
    expect(outcomes.at(-1)).toBe("throttled");
    // Another address is not affected.
    const other = await api.user("viewer");
    expect((await authorizeWithBackoff(api.prisma, { email: other.email, password: other.password }, "192.0.2.45")).outcome).toBe("ok");
  });

  it("every attempt is recorded without the password and listed for admins only", async () => {
    const someone = await api.user("viewer");
    await authorizeWithBackoff(api.prisma, { email: someone.email, password: "not-it-secret-guess" }, "198.51.100.99");
    const admin = await api.user("admin");
    const listed = await api.caller(admin).users.signIns({ limit: 500 });
    expect(listed.find((a) => a.email === someone.email)).toMatchObject({ outcome: "wrong", address: "198.51.100.99" });
    expect(await api.dumpDatabase()).not.toContain("not-it-secret-guess");
    await expect(api.caller(someone).users.signIns({ limit: 5 })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});
