// Sign-in and identity on a real database: password sign-in (argon2id, disabled users
// refused), session cookies, personal API tokens (stored only hashed, revocable, lastUsedAt),
// and the admin's user management guards.
import http from "node:http";
// next-auth's own OAuth client library: the provider's userinfo step gets one of its clients.
import { Issuer } from "openid-client";
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { createAuthOptions } from "../../server/auth/options";
import { authenticateRequest } from "../../server/auth/request";
import { authorizeCredentials } from "../../server/auth/users";
import { createApiFixture, TEST_SECRET, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
let api: ApiFixture;
/** A second database where the only admins are the ones a test makes. */
let solo: ApiFixture;
beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  solo = createApiFixture(await createTestDatabase());
});

const request = (headers: Record<string, string>) => new Request("http://cats.test/api/trpc/auth.me", { headers });

describe("password sign-in", () => {
  it("accepts the right password (email in any case), refuses a wrong one, an unknown email and a disabled user", async () => {
    const user = await api.user("operator", { email: `Mixed-${Date.now()}@Cats.Test`, password: "a long enough password" });
    expect(user.email).toBe(user.email.toLowerCase());
    expect(await authorizeCredentials(api.prisma, { email: user.email.toUpperCase(), password: "a long enough password" })).toEqual({
      id: user.id,
      email: user.email,
      name: user.name,
      role: "operator",
    });
    expect(await authorizeCredentials(api.prisma, { email: user.email, password: "a long enough passwore" })).toBeNull();
    expect(await authorizeCredentials(api.prisma, { email: "nobody@cats.test", password: "a long enough password" })).toBeNull();
    expect(await authorizeCredentials(api.prisma, { email: user.email })).toBeNull();
    expect(await authorizeCredentials(api.prisma, undefined)).toBeNull();

    const admin = await api.user("admin");
    await api.caller(admin).users.disable({ userId: user.id });
    expect(await authorizeCredentials(api.prisma, { email: user.email, password: "a long enough password" })).toBeNull();
  });

  it("stores an argon2id hash, never the password", async () => {
    const user = await api.user("viewer", { password: "plain text never stored" });
    const row = await db.pool.query("SELECT password_hash FROM users WHERE id = $1", [user.id]);
    expect(row.rows[0].password_hash).toMatch(/^\$argon2id\$/);
    expect(await api.dumpDatabase()).not.toContain("plain text never stored");
  });

  it("the session callback exposes id, email, name and role from the database, nothing else", async () => {
    const user = await api.user("operator");
    const options = createAuthOptions({ prisma: () => api.prisma, env: { NEXTAUTH_SECRET: TEST_SECRET, OIDC_NAME: "SSO" } });
    expect(options.providers.map((p) => p.id)).toEqual(["credentials"]);
    const session = await options.callbacks!.session!({
      session: { expires: "2099-01-01T00:00:00.000Z" },
      token: { sub: user.id },
      user: undefined as never,
      newSession: undefined,
      trigger: "update",
    });
    expect(session).toEqual({
      expires: "2099-01-01T00:00:00.000Z",
      user: { id: user.id, email: user.email, name: user.name, role: "operator" },
    });
    const anonymous = await options.callbacks!.session!({
      session: { expires: "x" },
      token: { sub: "not-a-user" },
      user: undefined as never,
      newSession: undefined,
      trigger: "update",
    });
    expect(anonymous).toEqual({ expires: "x" });
  });

  it("enables GitHub and OIDC only when configured", () => {
    const env = {
      NEXTAUTH_SECRET: TEST_SECRET,
      GITHUB_ID: "id",
      GITHUB_SECRET: "s",
      OIDC_ISSUER: "https://idp.example.com",
      OIDC_CLIENT_ID: "c",
      OIDC_CLIENT_SECRET: "s",
      OIDC_NAME: "Acme SSO",
    };
    const options = createAuthOptions({ prisma: () => api.prisma, env });
    expect(options.providers.map((p) => [p.id, p.type, p.name])).toEqual([
      ["credentials", "credentials", "Credentials"],
      ["github", "oauth", "GitHub"],
      ["oidc", "oauth", "Acme SSO"],
    ]);
  });
});

describe("GitHub sign-in", () => {
  /** GitHub's /user and /user/emails as a local server answers them, and the provider's own steps run against it. */
  async function signInWithGitHub(emails: Array<{ email: string; primary: boolean; verified: boolean }>) {
    const server = http.createServer((req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({ login: "octocat", id: 583231, name: null, email: "public@example.com", avatar_url: "https://a.example/o.png" }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("the test server has no port");
    const { port } = address;
    const issuer = new Issuer({ issuer: "https://github.com/login/oauth", userinfo_endpoint: `http://127.0.0.1:${port}/user` });
    const client = new issuer.Client({ client_id: "id", client_secret: "s" });
    const realFetch = globalThis.fetch;
    globalThis.fetch = async (input, init) =>
      String(input) === "https://api.github.com/user/emails" ? Response.json(emails) : realFetch(input, init);
    try {
      const env = { NEXTAUTH_SECRET: TEST_SECRET, GITHUB_ID: "id", GITHUB_SECRET: "s", OIDC_NAME: "SSO" };
      const options = createAuthOptions({ prisma: () => api.prisma, env });
      const github = options.providers.find((p) => p.id === "github");
      // Our userinfo step is an option over the provider's defaults (next-auth merges them at start).
      const userinfo = github?.type === "oauth" ? github.options?.userinfo : undefined;
      if (github?.type !== "oauth" || typeof userinfo !== "object" || !userinfo.request) throw new Error("no GitHub userinfo step");
      const provider = { ...github, signinUrl: "http://cats.test/signin", callbackUrl: "http://cats.test/callback" };
      const profile = await userinfo.request({ client, provider, tokens: { access_token: "gho_token" } });
      const user = await github.profile(profile, { access_token: "gho_token" });
      const account = { provider: "github", type: "oauth" as const, providerAccountId: user.id };
      const allowed = await options.callbacks!.signIn!({ user, account, profile });
      return { profile, user, allowed };
    } finally {
      globalThis.fetch = realFetch;
      server.close();
    }
  }

  it("a verified primary email of an enabled user signs in; the profile says it is verified", async () => {
    const member = await api.user("viewer");
    const { profile, user, allowed } = await signInWithGitHub([
      { email: "other@example.com", primary: false, verified: true },
      { email: member.email, primary: true, verified: true },
    ]);
    expect(profile).toMatchObject({ login: "octocat", email: member.email, email_verified: true });
    expect(user).toEqual({ id: "583231", name: "octocat", email: member.email, image: "https://a.example/o.png" });
    expect(allowed).toBe(true);
  });

  it("an unverified primary email, no primary one, or one nobody here has is refused; the public profile email never counts", async () => {
    const member = await api.user("viewer");
    for (const emails of [
      [{ email: member.email, primary: true, verified: false }],
      [{ email: member.email, primary: false, verified: true }],
      [],
    ]) {
      const { profile, user, allowed } = await signInWithGitHub(emails);
      expect(profile).toMatchObject({ email_verified: false });
      expect(user.email ?? null).toBeNull();
      expect(allowed).toBe(false);
    }
    const stranger = await signInWithGitHub([{ email: "stranger@example.com", primary: true, verified: true }]);
    expect(stranger.profile).toMatchObject({ email_verified: true });
    expect(stranger.allowed).toBe(false);
  });
});

describe("session cookies", () => {
  it("a cookie signed with the secret identifies the user; a wrong secret, an unknown user or no secret does not", async () => {
    const user = await api.user("viewer");
    const deps = { prisma: api.prisma, secret: TEST_SECRET };
    expect(await authenticateRequest(request({ cookie: await api.sessionCookie(user.id) }), deps)).toMatchObject({
      id: user.id,
      role: "viewer",
      via: "session",
    });
    expect(
      await authenticateRequest(request({ cookie: await api.sessionCookie(user.id, "another-secret-entirely-000000") }), deps),
    ).toBeNull();
    expect(await authenticateRequest(request({ cookie: await api.sessionCookie(crypto.randomUUID()) }), deps)).toBeNull();
    expect(await authenticateRequest(request({ cookie: await api.sessionCookie(user.id) }), { ...deps, secret: undefined })).toBeNull();
    expect(await authenticateRequest(request({}), deps)).toBeNull();
  });

  it("the session cookie is found among others, and read whole when next-auth split it into chunks", async () => {
    const user = await api.user("viewer");
    const deps = { prisma: api.prisma, secret: TEST_SECRET };
    const cookie = await api.sessionCookie(user.id);
    const jwt = cookie.slice(cookie.indexOf("=") + 1);
    const half = Math.floor(jwt.length / 2);
    const among = `theme=dark; note=a%20b; ${cookie}; flag`;
    expect(await authenticateRequest(request({ cookie: among }), deps)).toMatchObject({ id: user.id, via: "session" });
    const chunked = `next-auth.session-token.1=${jwt.slice(half)}; theme=dark; next-auth.session-token.0=${jwt.slice(0, half)}`;
    expect(await authenticateRequest(request({ cookie: chunked }), deps)).toMatchObject({ id: user.id, via: "session" });
    // One chunk alone is no session.
    expect(await authenticateRequest(request({ cookie: `next-auth.session-token.0=${jwt.slice(0, half)}` }), deps)).toBeNull();
  });

  it("sign-out ends the session everywhere: a copied cookie stops working, a new sign-in works; tokens are unaffected", async () => {
    const user = await api.user("operator");
    const deps = { prisma: api.prisma, secret: TEST_SECRET };
    const options = createAuthOptions({ prisma: () => api.prisma, env: { NEXTAUTH_SECRET: TEST_SECRET, OIDC_NAME: "SSO" } });
    // A session as next-auth makes it at sign-in: the jwt callback stamps the current version.
    const signedIn = await options.callbacks!.jwt!({ token: { sub: user.id }, user: { id: user.id }, account: null } as never);
    const cookie = await api.sessionCookie(user.id, TEST_SECRET, signedIn);
    const { token } = await api.caller(user).tokens.create({ name: "survives sign-out" });
    expect(await authenticateRequest(request({ cookie }), deps)).toMatchObject({ id: user.id });

    await options.events!.signOut!({ token: signedIn, session: undefined } as never);
    expect(await authenticateRequest(request({ cookie }), deps)).toBeNull(); // the copy no longer counts
    const session = await options.callbacks!.session!({ session: { expires: "x" }, token: signedIn } as never);
    expect(session).not.toHaveProperty("user");

    const again = await options.callbacks!.jwt!({ token: { sub: user.id }, user: { id: user.id }, account: null } as never);
    expect(await authenticateRequest(request({ cookie: await api.sessionCookie(user.id, TEST_SECRET, again) }), deps)).toMatchObject({
      id: user.id,
    });
    expect(await authenticateRequest(request({ authorization: `Bearer ${token}` }), deps)).toMatchObject({ id: user.id, via: "token" });
  });
});

describe("API tokens", () => {
  it("a created token authenticates as Bearer, is stored only as its sha256, and records lastUsedAt", async () => {
    const user = await api.user("operator");
    const created = await api.caller(user).tokens.create({ name: "ci" });
    expect(created.token).toMatch(/^cc_[A-Za-z0-9_-]{43}$/);
    expect(created.token.startsWith(created.prefix)).toBe(true);
    expect(created.lastUsedAt).toBeNull();

    const dump = await api.dumpDatabase();
    expect(dump).not.toContain(created.token);
    expect(dump).not.toContain(created.token.slice(created.prefix.length));
    const sha = (await import("node:crypto")).createHash("sha256").update(created.token).digest("hex");
    expect(dump).toContain(sha);

    const ctx = await createContextFactory(api.source)({ req: request({ authorization: `Bearer ${created.token}` }) });
    expect(ctx.user).toEqual({ id: user.id, email: user.email, name: user.name, role: "operator", via: "token" });
    const [listed] = await api.caller(user).tokens.list();
    expect(listed).toMatchObject({ id: created.id, name: "ci", prefix: created.prefix, revokedAt: null });
    expect(listed!.lastUsedAt).not.toBeNull();
    expect(Object.keys(listed!).sort()).toEqual(["createdAt", "expiresAt", "id", "lastUsedAt", "name", "prefix", "revokedAt"]);
  });

  it("a revoked token, an unknown token, a malformed header and a disabled owner are refused; a bad token never falls back to the cookie", async () => {
    const user = await api.user("operator");
    const auth = (headers: Record<string, string>) => authenticateRequest(request(headers), { prisma: api.prisma, secret: TEST_SECRET });
    const { token, id } = await api.caller(user).tokens.create({ name: "to revoke" });
    expect(await auth({ authorization: `Bearer ${token}` })).not.toBeNull();
    const revoked = await api.caller(user).tokens.revoke({ id });
    expect(revoked.revokedAt).not.toBeNull();
    expect(await auth({ authorization: `Bearer ${token}` })).toBeNull();
    await expect(api.caller({ ...user, via: "token" }).tokens.list()).resolves.toBeDefined(); // the caller itself still exists

    expect(await auth({ authorization: `Bearer cc_${"x".repeat(43)}` })).toBeNull();
    expect(await auth({ authorization: `Basic ${Buffer.from("a:b").toString("base64")}` })).toBeNull();
    expect(await auth({ authorization: `Bearer ${token}`, cookie: await api.sessionCookie(user.id) })).toBeNull();

    const second = await api.caller(user).tokens.create({ name: "owner disabled" });
    await api.caller(await api.user("admin")).users.disable({ userId: user.id });
    expect(await auth({ authorization: `Bearer ${second.token}` })).toBeNull();
  });

  it("tokens are created from a browser session only; others' tokens are NOT_FOUND to non-admins; an admin may revoke any", async () => {
    const owner = await api.user("viewer");
    const other = await api.user("operator");
    const admin = await api.user("admin");
    await expect(api.caller({ ...owner, via: "token" }).tokens.create({ name: "minted by a token" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    const { id } = await api.caller(owner).tokens.create({ name: "mine" });
    await expect(api.caller(other).tokens.revoke({ id })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await api.caller(other).tokens.list()).map((t) => t.id)).not.toContain(id);
    expect((await api.caller(admin).tokens.revoke({ id })).revokedAt).not.toBeNull();
    const again = await api.caller(owner).tokens.revoke({ id });
    expect(again.revokedAt).not.toBeNull();
  });
});

describe("user management (admin)", () => {
  it("creates users with a role, refuses a duplicate email with CONFLICT and a short password with field errors", async () => {
    const admin = await api.user("admin");
    const email = `new-${Date.now()}@cats.test`;
    const created = await api.caller(admin).users.create({ email, name: "New Cat", password: "ten chars!!", role: "operator" });
    expect(created).toMatchObject({ email, name: "New Cat", role: "operator", disabledAt: null });
    await expect(
      api.caller(admin).users.create({ email: email.toUpperCase(), name: "Dup", password: "ten chars!!" }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const short = await api
      .caller(admin)
      .users.create({ email: `s-${email}`, name: "Short", password: "short" })
      .catch((e: unknown) => e);
    expect(short).toMatchObject({ code: "BAD_REQUEST" });
    expect((await api.caller(admin).users.list()).find((u) => u.email === email)).toMatchObject({ role: "operator" });
  });

  it("role changes apply on the next request; the last enabled admin cannot be demoted or disabled, and nobody disables themselves", async () => {
    const admin = await solo.user("admin");
    const viewer = await solo.user("viewer");
    await expect(solo.caller(admin).users.setRole({ userId: admin.id, role: "operator" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    await expect(solo.caller(admin).users.disable({ userId: admin.id })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });

    const cookie = await solo.sessionCookie(viewer.id);
    const ctx = createContextFactory(solo.source);
    expect((await ctx({ req: request({ cookie }) })).user?.role).toBe("viewer");
    await solo.caller(admin).users.setRole({ userId: viewer.id, role: "admin" });
    expect((await ctx({ req: request({ cookie }) })).user?.role).toBe("admin");
    // Two admins now: one may step down, and then the other is the last.
    await solo.caller(admin).users.setRole({ userId: admin.id, role: "viewer" });
    const promoted = { ...viewer, role: "admin" as const };
    await expect(solo.caller(promoted).users.setRole({ userId: promoted.id, role: "viewer" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    await expect(solo.caller(promoted).users.setRole({ userId: crypto.randomUUID(), role: "viewer" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect((await solo.caller(promoted).users.list()).map((u) => [u.id, u.role])).toEqual([
      [admin.id, "viewer"],
      [viewer.id, "admin"],
    ]);
  });
});
