// Authorization of every tRPC procedure, built from the router itself: a procedure added
// without an entry here fails the first test. Each procedure is called by an anonymous
// caller and by a viewer, an operator and an admin; a denied call must be UNAUTHORIZED
// (anonymous) or FORBIDDEN (signed in), an allowed one anything else. Inputs are empty
// objects, so an allowed mutation stops at input validation and changes nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { hasRole, ROLES, type Role } from "../../lib/roles";
import { appRouter } from "../../server/api/root";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, callPath, outcomeOf, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness, type Harness } from "../helpers/tasks";

/** The least role each procedure needs ("public": anyone, signed in or not). */
const REQUIRED: Record<string, "public" | Role> = {
  "auth.me": "public",
  "tasks.start": "operator",
  "tasks.confirm": "operator",
  "tasks.followUp": "operator",
  "tasks.cancel": "operator",
  "tasks.rerun": "operator",
  "tasks.get": "viewer",
  "tasks.runtimeContext": "operator",
  "forge.new": "operator",
  "forge.edit": "operator",
  "forge.feedback": "operator",
  "forge.pass": "operator",
  "forge.choose": "operator",
  "forge.status": "viewer",
  "forge.artifact": "viewer",
  "sessions.list": "viewer",
  "sessions.counts": "viewer",
  "sessions.timeline": "viewer",
  "sessions.feedback": "viewer",
  "sessions.state": "viewer",
  "sessions.compare": "viewer",
  "sessions.fork": "operator",
  "sessions.deliver": "operator",
  "bakeOffs.get": "viewer",
  "bakeOffs.judge": "operator",
  "bakeOffs.pick": "operator",
  "bakeOffs.dismiss": "operator",
  "sessions.deliveries": "viewer",
  "sessions.approveDelivery": "operator",
  "sessions.deliveryApprovals": "viewer",
  "sessions.revert": "operator",
  "sessions.modify": "operator",
  "sessions.resume": "operator",
  "sessions.cleanUp": "operator",
  "sessions.prune": "operator",
  "sessions.cleanUpStatus": "viewer",
  "projects.list": "viewer",
  "projects.upsert": "operator",
  "projects.readiness": "operator",
  "projects.workflows": "operator",
  "runners.list": "viewer",
  "runners.live": "viewer",
  "tokens.create": "viewer",
  "tokens.list": "viewer",
  "tokens.revoke": "viewer",
  "tokens.listAll": "admin",
  "invitations.create": "admin",
  "invitations.list": "admin",
  "invitations.revoke": "admin",
  "invitations.view": "public",
  "invitations.accept": "public",
  "users.list": "admin",
  "users.signIns": "admin",
  "users.create": "admin",
  "users.setRole": "admin",
  "users.disable": "admin",
  "live.session": "viewer",
  "live.updates": "viewer",
  "live.older": "viewer",
  "live.output": "viewer",
  "replay.at": "viewer",
  "lineage.tree": "viewer",
  "settings.projects": "operator",
  "settings.shells": "operator",
  "settings.brains": "operator",
  "settings.checkBrain": "operator",
  "settings.workflows": "viewer",
  "settings.effective": "operator",
  "settings.history": "operator",
  "settings.configureProject": "operator",
  "settings.roles": "operator",
  "settings.checkRole": "operator",
  "settings.testDelivery": "operator",
  "settings.configureServer": "admin",
  "settings.revert": "operator",
  "inbox.list": "viewer",
  "inbox.acknowledge": "operator",
  "inbox.live": "viewer",
  "intake.show": "viewer",
  "intake.setRules": "operator",
  "intake.setSecret": "operator",
  "intake.held": "viewer",
  "intake.issueOf": "viewer",
  "intake.startHeld": "operator",
  "intake.dismissHeld": "operator",
  "ops.validateConfig": "operator",
  "ops.detectShells": "admin",
  "ops.checkBrains": "admin",
  "ops.go": "operator",
  "ops.rebuildProjections": "admin",
  "conversations.start": "operator",
  "conversations.post": "operator",
  "conversations.setMode": "operator",
  "conversations.progress": "operator",
  "conversations.terminate": "operator",
  "conversations.list": "viewer",
  "conversations.get": "viewer",
  "conversations.agents": "viewer",
  "conversations.mode": "viewer",
  "conversations.live": "viewer",
  "modes.list": "viewer",
  "usage.session": "viewer",
  "usage.report": "viewer",
  "bakeOffView.of": "viewer",
  "bakeOffView.comparison": "viewer",
  "bakeOffView.updates": "viewer",
  "agentRecord.stats": "viewer",
};

type CallerRole = "anonymous" | Role;
const CALLERS: CallerRole[] = ["anonymous", ...ROLES];

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
const users = {} as Record<Role, CurrentUser>;
beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
  for (const role of ROLES) users[role] = await api.user(role);
});

function expected(path: string, caller: CallerRole): "allowed" | "UNAUTHORIZED" | "FORBIDDEN" {
  const required = REQUIRED[path];
  if (required === undefined) throw new Error(`no entry for ${path}`);
  if (required === "public") return "allowed";
  if (caller === "anonymous") return "UNAUTHORIZED";
  return hasRole(caller, required) ? "allowed" : "FORBIDDEN";
}

describe("authorization table", () => {
  it("has an entry for every procedure of the router, and none for procedures that do not exist", () => {
    expect(Object.keys(appRouter._def.procedures).sort()).toEqual(Object.keys(REQUIRED).sort());
  });

  const cases = Object.keys(appRouter._def.procedures).flatMap((path) => CALLERS.map((caller) => ({ path, caller })));
  it.each(cases)("$path as $caller", async ({ path, caller }) => {
    const outcome = await outcomeOf(callPath(api.caller(caller === "anonymous" ? null : users[caller]), path, {}));
    const want = expected(path, caller);
    if (want === "allowed") expect(["UNAUTHORIZED", "FORBIDDEN"]).not.toContain(outcome);
    else expect(outcome).toBe(want);
  });
});

describe("a forged command is refused before it touches anything", () => {
  it("a viewer's confirm is FORBIDDEN and records nothing; an anonymous one is UNAUTHORIZED", async () => {
    const projectId = await h.project(`authz-${Date.now()}`, {
      coder: [{ reply: "p" }],
      reviewer: [{ reply: "r" }],
      tester: [{ reply: "t" }],
    });
    const { sessionId } = await api.caller(users.operator).tasks.start({ projectId, prompt: "Fix sum()", mode: "proposal" });
    const before = await db.store.readStream(sessionId);
    const countEvents = async () => Number((await db.pool.query("SELECT count(*) AS n FROM events")).rows[0].n);
    const totalBefore = await countEvents();

    await expect(api.caller(users.viewer).tasks.confirm({ sessionId, via: "button" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(api.caller(null).tasks.confirm({ sessionId })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(api.caller(users.viewer).tasks.cancel({ sessionId })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(api.caller(users.viewer).tasks.followUp({ sessionId, text: "confirm" })).rejects.toMatchObject({ code: "FORBIDDEN" });

    expect(await db.store.readStream(sessionId)).toEqual(before);
    expect(await countEvents()).toBe(totalBefore);
    // The viewer may still read it.
    expect(await api.caller(users.viewer).tasks.get({ sessionId })).toMatchObject({ sessionId, fsm: "proposal_coder", status: "active" });
  });

  it("a user disabled after signing in loses access on the next request (the context reads the database)", async () => {
    const operator = await api.user("operator");
    const cookie = await api.sessionCookie(operator.id);
    const { createContextFactory } = await import("../../server/api/context");
    const createContext = createContextFactory(api.source);
    const req = () => new Request("http://cats.test/api/trpc/sessions.list", { headers: { cookie } });
    expect((await createContext({ req: req() })).user).toMatchObject({ id: operator.id, role: "operator", via: "session" });
    await api.caller(users.admin).users.disable({ userId: operator.id });
    expect((await createContext({ req: req() })).user).toBeNull();
  });
});
