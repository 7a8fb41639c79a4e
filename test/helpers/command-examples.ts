// An example input for every mutation of the router, made fresh for each use (a new session
// to act on, a new name), for the tests that send every command: the idempotency test and the
// fuzz test. A mutation without one fails those tests until it is given one here.
import crypto from "node:crypto";
import { appRouter } from "../../server/api/root";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, type ApiFixture } from "./api";
import { createTestDatabase, type TestDatabase } from "./db";
import { createHarness, type Harness } from "./tasks";

/** The router's procedures of `type`, by path. */
export function proceduresOf(type: "query" | "mutation"): string[] {
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: string } }> } })._def.procedures;
  return Object.entries(procedures)
    .filter(([, p]) => p._def.type === type)
    .map(([path]) => path)
    .sort();
}

/** A zod schema as much of it as the keys need: its definition's kind, its shape, what it wraps. */
interface SchemaLike {
  def?: { type?: string; innerType?: SchemaLike; shape?: Record<string, unknown> };
}

/**
 * The top-level fields of a procedure's input (its zod object, through optional, default and
 * prefault wrappers); null when it takes no input or not an object.
 */
export function inputFields(path: string): string[] | null {
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, { _def: { inputs: SchemaLike[] } }> } })._def.procedures;
  const fields = new Set<string>();
  for (let schema of procedures[path]?._def.inputs ?? []) {
    while (schema.def?.innerType && schema.def.type !== "object") schema = schema.def.innerType;
    for (const key of Object.keys(schema.def?.shape ?? {})) fields.add(key);
  }
  return fields.size ? [...fields] : null;
}

export interface ExampleContext {
  api: ApiFixture;
  admin: CurrentUser;
  /** A project with scripted coder, reviewer, tester and planner. */
  projectId: string;
  /** A git repository a new project may point at. */
  repo: string;
}

export interface CommandFixture {
  db: TestDatabase;
  api: ApiFixture;
  h: Harness;
  admin: CurrentUser;
  /** The admin's session cookie and an API token of theirs. */
  cookie: string;
  token: string;
  /** A project with scripted coder, reviewer, tester and planner. */
  projectId: string;
}

/** What the tests that send every command start from: a database, a signed-in admin with a token, a project (`name`). */
export async function createCommandFixture(name: string): Promise<CommandFixture> {
  const db = await createTestDatabase();
  const api = createApiFixture(db);
  const h = createHarness(db);
  const admin = await api.user("admin");
  const cookie = await api.sessionCookie(admin.id);
  const projectId = await h.project(name, {
    coder: [{ reply: "p" }],
    reviewer: [{ reply: "r" }],
    tester: [{ reply: "t" }],
    planner: [{ reply: "i" }],
  });
  const token = (await api.caller(admin).tokens.create({ name })).token;
  return { db, api, h, admin, cookie, token, projectId };
}

export function commandExamples({ api, admin, projectId, repo }: ExampleContext): Record<string, () => Promise<unknown>> {
  const caller = () => api.caller(admin);
  const startTask = async (prompt = "Fix sum()") => (await caller().tasks.start({ projectId, prompt, mode: "proposal" })).sessionId;
  const finishedTask = async () => {
    const sessionId = await startTask();
    await caller().tasks.cancel({ sessionId });
    return sessionId;
  };
  const startConversation = async () => (await caller().conversations.start({ projectId, title: "talk" })).sessionId;

  return {
    "tasks.start": async () => ({ projectId, prompt: `start ${crypto.randomUUID()}`, mode: "proposal" }),
    "tasks.confirm": async () => ({ sessionId: await startTask() }),
    "tasks.followUp": async () => ({ sessionId: await startTask(), text: "and the docs" }),
    "tasks.cancel": async () => ({ sessionId: await startTask() }),
    "tasks.rerun": async () => ({ sessionId: await startTask() }),
    "forge.new": async () => ({ projectId, idea: `idea ${crypto.randomUUID()}` }),
    "forge.edit": async () => ({ sessionId: await startTask(), path: "docs/prd.md", content: "# PRD", baseHash: null }),
    "forge.feedback": async () => ({ sessionId: await startTask(), text: "more detail" }),
    "forge.pass": async () => ({ sessionId: await startTask() }),
    "forge.choose": async () => ({ sessionId: await startTask(), choice: "retry" }),
    "sessions.fork": async () => ({ sessionId: await startTask(), atVersion: 2 }),
    "sessions.deliver": async () => ({ sessionId: await startTask() }),
    // Refused (the task is no bake-off): a refusal is a command's answer too.
    "bakeOffs.judge": async () => ({ sessionId: await startTask() }),
    "bakeOffs.pick": async () => ({ sessionId: await startTask(), contenderId: "c1" }),
    "bakeOffs.dismiss": async () => ({ sessionId: await startTask() }),
    "sessions.approveDelivery": async () => ({ sessionId: await startTask() }),
    "sessions.revert": async () => ({ sessionId: await startTask(), to: "proposal_coder" }),
    "sessions.modify": async () => ({ sessionId: await finishedTask(), change: "also the docs" }),
    "sessions.resume": async () => ({ sessionId: await startTask() }),
    "sessions.cleanUp": async () => ({ sessionId: await finishedTask() }),
    "sessions.prune": async () => ({ olderThanDays: 1, outcomes: ["cancelled"] }),
    "projects.upsert": async () => ({
      id: `p-${crypto.randomBytes(4).toString("hex")}`,
      name: "Another",
      repoPath: repo,
      allowlist: [],
      agents: {},
    }),
    "tokens.create": async () => ({ name: `token ${crypto.randomUUID()}` }),
    "tokens.revoke": async () => ({ id: (await caller().tokens.create({ name: "to revoke" })).id }),
    "users.create": async () => ({ email: `u-${crypto.randomUUID()}@cats.test`, name: "New", password: "a long password 123" }),
    "users.setRole": async () => ({ userId: (await api.user("viewer")).id, role: "operator" }),
    "users.disable": async () => ({ userId: (await api.user("viewer")).id }),
    "invitations.create": async () => ({ role: "operator", email: `i-${crypto.randomUUID()}@cats.test` }),
    "invitations.revoke": async () => ({ id: (await caller().invitations.create({ role: "viewer" })).id }),
    "invitations.accept": async () => ({
      token: (await caller().invitations.create({ role: "viewer" })).token,
      name: "Invited",
      email: `i-${crypto.randomUUID()}@cats.test`,
      password: "a long password 123",
    }),
    "ops.validateConfig": async () => ({ projectId }),
    "ops.checkBrains": async () => ({ projectId }),
    "ops.go": async () => ({ agent: "coder-sim", prompt: `go ${crypto.randomUUID()}`, projectId }),
    "ops.rebuildProjections": async () => undefined,
    "settings.configureProject": async () => ({ projectId, stepTimeoutMs: 60_000 + Math.floor(Math.random() * 1000) }),
    "settings.configureServer": async () => ({ rateLimitMs: Math.floor(Math.random() * 1000) }),
    "settings.revert": async () => ({ scope: "server", version: 1 }),
    "settings.checkBrain": async () => ({ projectId, source: "project", brainId: "role:coder" }),
    "settings.checkRole": async () => ({ projectId, role: "planner", agent: { kind: "scripted", id: "p", responses: [{ reply: "x" }] } }),
    "settings.testDelivery": async () => ({ projectId }),
    "inbox.acknowledge": async () => ({ sessionId: await startTask() }),
    "intake.setRules": async () => ({ projectId, rules: { provider: "github", repository: `acme/r-${crypto.randomUUID()}` } }),
    "intake.setSecret": async () => ({ projectId, secret: `whsec-${crypto.randomUUID()}` }),
    // Refused by the domain (nothing of this project was held): a refusal is answered once too.
    "intake.startHeld": async () => ({ projectId, deliveryId: `d-${crypto.randomUUID()}` }),
    "intake.dismissHeld": async () => ({ projectId, deliveryId: `d-${crypto.randomUUID()}` }),
    "conversations.start": async () => ({ projectId, title: `talk ${crypto.randomUUID()}` }),
    "conversations.post": async () => ({ sessionId: await startConversation(), text: "hello" }),
    "conversations.setMode": async () => ({ sessionId: await startConversation(), mode: "voting" }),
    "conversations.progress": async () => ({ sessionId: await startConversation(), kind: "decision", detail: "we go" }),
    "conversations.terminate": async () => ({ sessionId: await startConversation() }),
  };
}
