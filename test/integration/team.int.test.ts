// The team administers itself (req X2, docs/auth.md): invitations by one-time link (created,
// accepted once even by two at once, refused clearly when expired, revoked or used), the last
// sign-in of each user, and every change recorded as an event of the `team` stream with who
// made it — never a token, a token's hash or a password.
import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import { SHOWN_ONCE } from "../../server/api/idempotency";
import { createAuthOptions } from "../../server/auth/options";
import { authenticateRequest } from "../../server/auth/request";
import { authorizeCredentials, FORMER_MEMBER, userNames } from "../../server/auth/users";
import { TEAM_STREAM } from "../../server/events/team-catalog";
import type { RecordedEvent } from "../../server/events/types";
import { createApiFixture, TEST_SECRET, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
let api: ApiFixture;
beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
});

const PASSWORD = "a long password for cats";
const email = (what: string) => `${what}-${crypto.randomUUID()}@cats.test`;

/** The team stream's events after `version`, and its version now. */
async function teamEventsAfter(version: number): Promise<RecordedEvent[]> {
  const events = await db.store.readStream(TEAM_STREAM).catch(() => []);
  return events.filter((e) => e.version > version);
}
async function teamVersion(): Promise<number> {
  return (await db.store.streamVersion(TEAM_STREAM)) ?? 0;
}

/** The raw events table as text, for "never recorded" checks. */
async function eventsText(): Promise<string> {
  const rows = await db.pool.query<{ t: string }>(`SELECT e::text AS t FROM events e WHERE stream_id = $1`, [TEAM_STREAM]);
  return rows.rows.map((r) => r.t).join("\n");
}

describe("invitations", () => {
  it("an admin invites; the link's token is stored only hashed and never in an event; accepting creates the user with the role", async () => {
    const admin = await api.user("admin");
    const before = await teamVersion();
    const invited = email("op");
    const created = await api.caller(admin).invitations.create({ role: "operator", email: invited.toUpperCase() });
    expect(created).toMatchObject({ role: "operator", email: invited, status: "pending", invitedByName: admin.name });
    expect(created.path).toBe(`/invite/${created.token}`);
    expect(new Date(created.expiresAt).getTime() - Date.now()).toBeGreaterThan(6.9 * 86_400_000); // 7 days by default
    expect(await api.caller(admin).invitations.list()).toEqual(expect.arrayContaining([expect.objectContaining({ id: created.id })]));

    // What the link's page sees, signed out.
    const anonymous = api.caller(null);
    expect(await anonymous.invitations.view({ token: created.token })).toMatchObject({
      status: "pending",
      role: "operator",
      email: invited,
      invitedByName: admin.name,
    });
    // The email the invitation names is the only one it takes.
    await expect(
      anonymous.invitations.accept({ token: created.token, name: "Wrong", email: email("other"), password: PASSWORD }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    // The password rules of every account.
    await expect(
      anonymous.invitations.accept({ token: created.token, name: "Short", email: invited, password: "short" }),
    ).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });

    const user = await anonymous.invitations.accept({ token: created.token, name: "Olga Operator", email: invited, password: PASSWORD });
    expect(user).toMatchObject({ email: invited, name: "Olga Operator", role: "operator" });
    expect(await authorizeCredentials(api.prisma, { email: invited, password: PASSWORD })).toMatchObject({ id: user.id, role: "operator" });
    expect(await anonymous.invitations.view({ token: created.token })).toMatchObject({ status: "accepted" });
    expect((await api.caller(admin).invitations.list()).map((i) => i.id)).not.toContain(created.id);

    const events = await teamEventsAfter(before);
    expect(events.map((e) => [e.type, e.metadata.actor])).toEqual([
      ["InvitationCreated", { kind: "user", id: admin.id }],
      ["InvitationAccepted", { kind: "user", id: user.id }],
    ]);
    expect(events[0]!.data).toEqual({ invitationId: created.id, role: "operator", email: invited, expiresAt: created.expiresAt });
    expect(events[1]!.data).toEqual({ invitationId: created.id, userId: user.id, email: invited, name: "Olga Operator", role: "operator" });

    const hash = crypto.createHash("sha256").update(created.token).digest("hex");
    const dump = await api.dumpDatabase();
    expect(dump).not.toContain(created.token);
    expect(dump).toContain(hash); // stored, as its hash only
    const recorded = await eventsText();
    expect(recorded).not.toContain(hash);
    expect(recorded).not.toContain(created.token.slice(3, 20));
    expect(recorded).not.toContain(PASSWORD);
    expect(recorded).not.toMatch(/argon2/);
  });

  it("two accepts of one link at once make one user; the other is told the link was used", async () => {
    const admin = await api.user("admin");
    const { token } = await api.caller(admin).invitations.create({ role: "viewer" });
    const [a, b] = [email("race-a"), email("race-b")];
    const outcomes = await Promise.allSettled([
      api.caller(null).invitations.accept({ token, name: "A", email: a, password: PASSWORD }),
      api.caller(null).invitations.accept({ token, name: "B", email: b, password: PASSWORD }),
    ]);
    const fulfilled = outcomes.filter((o) => o.status === "fulfilled");
    const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatchObject({ code: "CONFLICT", message: expect.stringContaining("already been used") });
    const created = await api.prisma.user.count({ where: { email: { in: [a, b] } } });
    expect(created).toBe(1);
    const accepted = (await db.store.readStream(TEAM_STREAM)).filter(
      (e) => e.type === "InvitationAccepted" && [a, b].includes((e.data as { email: string }).email),
    );
    expect(accepted).toHaveLength(1);
  });

  it("an expired, a revoked and an unknown link read as such, and accepting them is refused clearly (never a 500)", async () => {
    const admin = await api.user("admin");
    const caller = api.caller(admin);
    const expired = await caller.invitations.create({ role: "viewer", expiresInDays: 1 });
    await db.pool.query(`UPDATE invitations SET expires_at = now() - interval '1 minute' WHERE id = $1`, [expired.id]);
    const revoked = await caller.invitations.create({ role: "admin" });
    const before = await teamVersion();
    await caller.invitations.revoke({ id: revoked.id });
    await caller.invitations.revoke({ id: revoked.id }); // again: nothing more recorded
    expect((await teamEventsAfter(before)).map((e) => [e.type, e.data, e.metadata.actor.id])).toEqual([
      ["InvitationRevoked", { invitationId: revoked.id }, admin.id],
    ]);
    expect((await caller.invitations.list()).map((i) => i.id)).not.toEqual(expect.arrayContaining([expired.id]));
    expect((await caller.invitations.list()).map((i) => i.id)).not.toEqual(expect.arrayContaining([revoked.id]));

    const anonymous = api.caller(null);
    expect(await anonymous.invitations.view({ token: expired.token })).toMatchObject({ status: "expired" });
    expect(await anonymous.invitations.view({ token: revoked.token })).toMatchObject({ status: "revoked" });
    expect(await anonymous.invitations.view({ token: "ci_nope" })).toEqual({ status: "unknown" });
    const accept = (token: string) => anonymous.invitations.accept({ token, name: "Late", email: email("late"), password: PASSWORD });
    await expect(accept(expired.token)).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringContaining("expired") });
    await expect(accept(revoked.token)).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringContaining("revoked") });
    await expect(accept("ci_nope")).rejects.toMatchObject({ code: "NOT_FOUND" });
    // Bounds: at most 30 days; an accepted one cannot be revoked.
    await expect(caller.invitations.create({ role: "viewer", expiresInDays: 31 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    const used = await caller.invitations.create({ role: "viewer" });
    await anonymous.invitations.accept({ token: used.token, name: "Used", email: email("used"), password: PASSWORD });
    await expect(caller.invitations.revoke({ id: used.id })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });

  it("an email that already has an account is refused, and the invitation stays pending", async () => {
    const admin = await api.user("admin");
    const existing = await api.user("viewer");
    const invitation = await api.caller(admin).invitations.create({ role: "operator" });
    await expect(
      api.caller(null).invitations.accept({ token: invitation.token, name: "Again", email: existing.email, password: PASSWORD }),
    ).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("already exists") });
    expect(await api.caller(null).invitations.view({ token: invitation.token })).toMatchObject({ status: "pending" });
  });
});

describe("audit of role, disable and token changes", () => {
  it("role changes, disabling and enabling are events with the admin as actor; a repeat records nothing; the guards hold", async () => {
    const admin = await api.user("admin");
    const member = await api.user("viewer");
    const caller = api.caller(admin);
    const before = await teamVersion();
    await caller.users.setRole({ userId: member.id, role: "operator" });
    await caller.users.setRole({ userId: member.id, role: "operator" });
    await caller.users.disable({ userId: member.id });
    await caller.users.disable({ userId: member.id, disabled: true });
    await caller.users.disable({ userId: member.id, disabled: false });
    await expect(caller.users.disable({ userId: admin.id })).rejects.toMatchObject({ message: "you cannot disable yourself" });
    expect((await teamEventsAfter(before)).map((e) => [e.type, e.data, e.metadata.actor])).toEqual([
      ["UserRoleChanged", { userId: member.id, from: "viewer", to: "operator" }, { kind: "user", id: admin.id }],
      ["UserDisabled", { userId: member.id }, { kind: "user", id: admin.id }],
      ["UserEnabled", { userId: member.id }, { kind: "user", id: admin.id }],
    ]);
  });

  it("an admin's users.create is an event with the admin as actor, never the password; a taken email is a CONFLICT and records nothing", async () => {
    const admin = await api.user("admin");
    const caller = api.caller(admin);
    const before = await teamVersion();
    const address = email("created");
    const created = await caller.users.create({ email: address, name: "Cleo Created", password: PASSWORD, role: "operator" });
    expect(created).toMatchObject({ email: address, name: "Cleo Created", role: "operator", disabledAt: null });
    await expect(caller.users.create({ email: address, name: "Again", password: PASSWORD })).rejects.toMatchObject({ code: "CONFLICT" });
    expect((await teamEventsAfter(before)).map((e) => [e.type, e.data, e.metadata.actor])).toEqual([
      ["UserCreated", { userId: created.id, email: address, name: "Cleo Created", role: "operator" }, { kind: "user", id: admin.id }],
    ]);
    expect(await eventsText()).not.toContain(PASSWORD);
    expect(await authorizeCredentials(api.prisma, { email: address, password: PASSWORD })).toMatchObject({
      id: created.id,
      role: "operator",
    });
  });

  it("the last enabled admin cannot be demoted: refused, and nothing is recorded", async () => {
    const solo = createApiFixture(await createTestDatabase());
    const admin = await solo.user("admin");
    const count = async () =>
      (await solo.deps.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE stream_id = $1`, [TEAM_STREAM])).rows[0]!.n;
    const before = await count();
    await expect(solo.caller(admin).users.setRole({ userId: admin.id, role: "viewer" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: "at least one enabled admin must remain",
    });
    expect(await solo.prisma.membership.findFirst({ where: { userId: admin.id }, select: { role: true } })).toEqual({ role: "admin" });
    expect(await count()).toBe(before);
  });

  it("tokens: created (with an expiry) and revoked as events, never with the token or its hash; an expired token no longer works", async () => {
    const member = await api.user("operator");
    const admin = await api.user("admin");
    const before = await teamVersion();
    const created = await api.caller(member).tokens.create({ name: "ci", expiresInDays: 30 });
    expect(new Date(created.expiresAt!).getTime() - Date.now()).toBeGreaterThan(29.9 * 86_400_000);
    // An admin sees everyone's tokens, with their owner, and may revoke any.
    const all = await api.caller(admin).tokens.listAll();
    expect(all.find((t) => t.id === created.id)).toMatchObject({ ownerId: member.id, ownerName: member.name, name: "ci" });
    await expect(api.caller(member).tokens.listAll()).rejects.toMatchObject({ code: "FORBIDDEN" });
    await api.caller(admin).tokens.revoke({ id: created.id });
    await api.caller(member).tokens.revoke({ id: created.id }); // again: nothing more recorded
    const events = await teamEventsAfter(before);
    expect(events.map((e) => [e.type, e.data, e.metadata.actor.id])).toEqual([
      ["ApiTokenCreated", { tokenId: created.id, ownerId: member.id, name: "ci", expiresAt: created.expiresAt }, member.id],
      ["ApiTokenRevoked", { tokenId: created.id, ownerId: member.id }, admin.id],
    ]);
    const recorded = await eventsText();
    expect(recorded).not.toContain(created.token);
    expect(recorded).not.toContain(crypto.createHash("sha256").update(created.token).digest("hex"));

    const expiring = await api.caller(member).tokens.create({ name: "short", expiresInDays: 1 });
    const deps = { prisma: api.prisma, secret: TEST_SECRET };
    const bearer = new Request("http://cats.test/api/trpc/auth.me", { headers: { authorization: `Bearer ${expiring.token}` } });
    expect(await authenticateRequest(bearer, deps)).toMatchObject({ id: member.id });
    await db.pool.query(`UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring.id]);
    expect(await authenticateRequest(bearer, deps)).toBeNull();
  });
});

describe("last sign-in", () => {
  it("is set by a password sign-in and by a provider's (OIDC) sign-in, and listed for admins", async () => {
    const admin = await api.user("admin");
    const viaPassword = await api.user("viewer");
    const viaOidc = await api.user("viewer");
    const listed = async (id: string) => (await api.caller(admin).users.list()).find((u) => u.id === id)!.lastSignInAt;
    expect(await listed(viaPassword.id)).toBeNull();
    const options = createAuthOptions({ prisma: () => api.prisma, env: { NEXTAUTH_SECRET: TEST_SECRET, OIDC_NAME: "SSO" } });
    const started = Date.now();
    await options.callbacks!.jwt!({
      token: { sub: viaPassword.id },
      user: { id: viaPassword.id },
      account: { type: "credentials" },
    } as never);
    await options.callbacks!.jwt!({
      token: { sub: "oidc-subject" },
      user: { id: "oidc-subject", email: viaOidc.email },
      account: { type: "oauth", provider: "oidc" },
    } as never);
    for (const id of [viaPassword.id, viaOidc.id]) {
      const at = await listed(id);
      expect(at).not.toBeNull();
      expect(new Date(at!).getTime()).toBeGreaterThanOrEqual(started - 1000);
    }
    // A request with an existing session is no sign-in.
    await db.pool.query(`UPDATE users SET last_sign_in_at = NULL WHERE id = $1`, [viaPassword.id]);
    await options.callbacks!.jwt!({ token: { sub: viaPassword.id, sv: 0 } } as never);
    expect(await listed(viaPassword.id)).toBeNull();
  });
});

describe("names of people", () => {
  it("every user label gets a name: a disabled user keeps theirs, an unknown one reads as a former member", async () => {
    const admin = await api.user("admin");
    const gone = await api.user("viewer");
    await api.caller(admin).users.disable({ userId: gone.id });
    const unknown = `user:${crypto.randomUUID()}`;
    expect(await userNames(api.prisma, [`user:${gone.id}`, unknown, "user:not-a-uuid", "runner:r-1", "system"])).toEqual({
      [`user:${gone.id}`]: gone.name,
      [unknown]: FORMER_MEMBER,
      "user:not-a-uuid": FORMER_MEMBER,
    });
  });
});

describe("secrets shown once are not kept with an idempotency key", () => {
  it("an invitation and a token created with an Idempotency-Key: the answer has them, the database never does; a repeat does not show them again", async () => {
    const admin = await api.user("admin");
    const cookie = await api.sessionCookie(admin.id);
    const send = async (path: string, input: unknown, key: string) => {
      const res = await handleTrpc(
        new Request(`http://cats.test/api/trpc/${path}`, {
          method: "POST",
          headers: {
            cookie,
            "content-type": "application/json",
            "idempotency-key": key,
            origin: "http://cats.test",
            "sec-fetch-site": "same-origin",
          },
          body: JSON.stringify(input),
        }),
        createContextFactory(api.source),
      );
      return { status: res.status, body: await res.text() };
    };
    const invitationKey = crypto.randomUUID();
    const first = await send("invitations.create", { role: "viewer" }, invitationKey);
    expect(first.status, first.body).toBe(200);
    const invitationToken = /"token":"(ci_[A-Za-z0-9_-]+)"/.exec(first.body)![1]!;
    const tokenKey = crypto.randomUUID();
    const created = await send("tokens.create", { name: "keyed" }, tokenKey);
    expect(created.status, created.body).toBe(200);
    const apiToken = /"token":"(cc_[A-Za-z0-9_-]+)"/.exec(created.body)![1]!;
    // The answer is kept in the background: wait for it, then look at every table.
    await expect
      .poll(
        async () =>
          (
            await db.pool.query(`SELECT count(*)::int AS n FROM command_keys WHERE key IN ($1, $2) AND status IS NOT NULL`, [
              invitationKey,
              tokenKey,
            ])
          ).rows[0].n,
      )
      .toBe(2);
    const dump = await api.dumpDatabase();
    expect(dump).not.toContain(invitationToken);
    expect(dump).not.toContain(apiToken);
    const again = await send("tokens.create", { name: "keyed" }, tokenKey);
    expect(again.status).toBe(200);
    expect(again.body).not.toContain(apiToken);
    expect(again.body).toContain(SHOWN_ONCE);
    expect(await api.prisma.apiToken.count({ where: { userId: admin.id, name: "keyed" } })).toBe(1);
  });
});
