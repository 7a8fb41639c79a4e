// The session view's API on a real database with a real runner: the first view (discussion
// apart from verdicts, names of who acted), live updates through the one shared LISTEN
// connection (many subscribers, one connection; resume after `lastEventId`), outputs
// opened on demand only for the session's own blobs, and failures with their class.
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { createCaller } from "../../server/api/root";
import { createApiToken, revokeApiToken } from "../../server/auth/tokens";
import { endBrowserSessions } from "../../server/auth/users";
import { putBlob } from "../../server/events/blobs";
import type { LiveBatch } from "../../server/sessions/view/follow";
import { sessionEventsListener } from "../../server/sessions/view/listener";
import type { SessionView } from "../../server/sessions/view/load";
import { createApiFixture, TEST_SECRET, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, reviewApprove, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
let operator: ReturnType<typeof createCaller>;
let viewer: ReturnType<typeof createCaller>;
let operatorName = "";

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
  await h.startRunner();
  const op = await api.user("operator");
  operatorName = op.name;
  operator = api.caller(op);
  viewer = api.caller(await api.user("viewer"));
});

afterAll(async () => {
  await sessionEventsListener(db.pool).close();
});

const coderFix = { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } };

async function proposalAwaitingConfirm(id: string): Promise<{ sessionId: string; view: SessionView }> {
  const projectId = await h.project(id, {
    coder: [{ reply: "Proposal: sum subtracts; make it add." }, coderFix],
    reviewer: [{ reply: "Fine by me; watch negative numbers." }, { reply: reviewApprove }],
    tester: [{ reply: "node --test covers it." }, { reply: testPlan() }],
  });
  const { sessionId } = await operator.tasks.start({ projectId, prompt: "Fix sum()", mode: "proposal" });
  await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
  return { sessionId, view: await viewer.live.session({ sessionId }) };
}

/** Reads batches until `until` holds for the latest one (or the time is up). */
async function collect(iterable: AsyncIterable<unknown>, until: (b: LiveBatch) => boolean, timeoutMs = 30_000): Promise<LiveBatch[]> {
  const batches: LiveBatch[] = [];
  const iterator = (iterable as AsyncIterable<LiveBatch | { id: string; data: LiveBatch }>)[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const next = await Promise.race([iterator.next(), new Promise<null>((r) => setTimeout(() => r(null), deadline - Date.now()))]);
      if (!next || next.done) break;
      // The caller yields tracked envelopes as [id, data, symbol].
      const value = next.value as unknown;
      const batch = (Array.isArray(value) ? value[1] : value) as LiveBatch;
      batches.push(batch);
      if (until(batch)) return batches;
    }
  } finally {
    await iterator.return?.();
  }
  throw new Error(`the condition never held; last state ${batches.at(-1)?.status.state}`);
}

describe("live.session", () => {
  it("shows the roundtable as discussion (simulated), the status, and who started the task", async () => {
    const { sessionId, view } = await proposalAwaitingConfirm("sv-first");
    expect(view.status).toMatchObject({
      state: "awaiting_operator_confirm",
      status: "active",
      mode: "proposal",
      iteration: 1,
      maxIterations: 3,
      step: null,
      // review_loop has a modify entry: once finished, the page offers Modify.
      modifiable: true,
    });
    const discussion = view.entries.filter((e) => e.detail.kind === "agent_output");
    expect(discussion.map((e) => e.detail.kind === "agent_output" && [e.detail.role, e.detail.phase, e.detail.simulated])).toEqual([
      ["coder", "discussion", true],
      ["reviewer", "discussion", true],
      ["tester", "discussion", true],
    ]);
    expect(view.entries.some((e) => e.detail.kind === "verdict")).toBe(false);
    expect(view.header).toMatchObject({ id: sessionId, workflow: "review_loop", parent: null, prompt: "Fix sum()" });
    expect(view.names[view.header.createdBy]).toBe(operatorName);
    // Nothing the viewer must not see: repository paths and agent configurations stay on the server.
    expect(JSON.stringify(view)).not.toContain(h.repo);
    expect(JSON.stringify(view)).not.toContain("responses");
  });

  it("is NOT_FOUND for an unknown session", async () => {
    await expect(viewer.live.session({ sessionId: "s-nope" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("live.older", () => {
  it("pages back from the first view to the session's first event, streamed chunks of finished steps left out", async () => {
    const sessionId = `s-long-${Date.now().toString(16)}`;
    const messages = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({ type: "OperatorMessagePosted", data: { text: `message ${from + i}` } }));
    const chunks = Array.from({ length: 30 }, (_, seq) => ({
      type: "AgentOutputStreamed",
      data: { stepId: "7d0b7a5e-8f0e-4a55-9a39-4d0f8f5a8b02", attempt: 1, role: "coder", seq, text: "…" },
    }));
    const actor = { actor: { kind: "system" as const, id: "test" } };
    let version = (
      await db.store.append(
        sessionId,
        "no_stream",
        [{ type: "SessionCreated", data: { title: "A long one", workflow: "review_loop", state: "start" } }, ...messages(0, 200)],
        actor,
      )
    ).version;
    version = (await db.store.append(sessionId, version, chunks, actor)).version;
    version = (await db.store.append(sessionId, version, messages(200, 250), actor)).version;
    expect(version).toBe(481);

    const view = await viewer.live.session({ sessionId, limit: 200 });
    expect(view.entries.length).toBe(200);
    expect(view.entries[0]!.version).toBe(282);
    expect(view.omitted).toBe(281);
    const seen = view.entries.map((e) => e.version);
    let before = view.entries[0]!.version;
    const omitted: number[] = [];
    for (;;) {
      const page = await viewer.live.older({ sessionId, beforeVersion: before, limit: 200 });
      seen.unshift(...page.entries.map((e) => e.version));
      omitted.push(page.omitted);
      if (page.omitted === 0) break;
      before = page.entries[0]!.version;
    }
    // 200 facts a page; the 30 chunks of a finished step neither shown nor counted.
    expect(omitted).toEqual([51, 0]);
    expect(seen).toEqual([...Array.from({ length: 201 }, (_, i) => i + 1), ...Array.from({ length: 250 }, (_, i) => 232 + i)]);
    await expect(viewer.live.older({ sessionId: "s-nope", beforeVersion: 5 })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("live.updates", () => {
  it("streams the build, verdict and passing test to approved after a confirm, over one LISTEN connection for all subscribers", async () => {
    const { sessionId, view } = await proposalAwaitingConfirm("sv-live");
    const subscribe = (after: number) => viewer.live.updates({ sessionId, afterVersion: after }) as Promise<AsyncIterable<unknown>>;
    const [a, b, c] = await Promise.all([subscribe(view.status.version), subscribe(view.status.version), subscribe(view.status.version)]);
    // The first batch comes at once, in sync, with nothing new.
    const first = await collect(a, () => true);
    expect(first[0]).toMatchObject({ version: view.status.version, entries: [] });
    const listeners = await db.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'catcafe-web-live'");
    expect(listeners.rows[0].n).toBe(1);

    await operator.tasks.confirm({ sessionId, via: "button" });
    const batches = await collect(b, (batch) => batch.status.state === "approved");
    const entries = batches.flatMap((x) => x.entries);
    const versions = entries.map((e) => e.version);
    expect(versions).toEqual([...new Set(versions)].sort((x, y) => x - y));
    expect(versions[0]).toBe(view.status.version + 1);
    expect(entries.find((e) => e.detail.kind === "confirmed")).toMatchObject({ actor: expect.stringMatching(/^user:/) });
    expect(batches.some((x) => Object.values(x.names).includes(operatorName))).toBe(true);
    expect(entries.find((e) => e.detail.kind === "commit")?.detail).toMatchObject({
      changedFiles: [{ path: "src/sum.js", status: "modified" }],
    });
    expect(entries.find((e) => e.detail.kind === "verdict")?.detail).toMatchObject({ decision: "approve" });
    expect(entries.find((e) => e.detail.kind === "test_command")?.detail).toMatchObject({ passed: true, exitCode: 0 });
    expect(entries.find((e) => e.detail.kind === "finalized")?.detail).toMatchObject({ outcome: "approved" });
    // While steps ran, the status named the working role and when its step started.
    expect(batches.some((x) => x.status.step?.role === "coder" && x.status.step.startedAt !== null)).toBe(true);
    expect(batches.at(-1)!.status).toMatchObject({ state: "approved", status: "finished", outcome: "approved", step: null });
    // The numbers count the whole session, not the entries a page holds (here one).
    const events = await db.store.readStream(sessionId);
    const ofKind = (type: string) => events.filter((e) => e.type === type);
    const tally = {
      verdicts: ofKind("ReviewVerdictRecorded").length,
      approvals: 1,
      testCommands: ofKind("TestCommandRecorded").length,
      testsPassed: 1,
      stateChanges: ofKind("SessionStateChanged").length,
    };
    expect(tally).toMatchObject({ verdicts: 1, testCommands: 1 });
    expect(tally.stateChanges).toBeGreaterThan(4);
    expect((await viewer.live.session({ sessionId, limit: 1 })).status.tally).toEqual(tally);
    expect(batches.at(-1)!.status.tally).toEqual(tally);

    // A reconnect resumes after the last batch it saw.
    const resumeAt = versions[Math.floor(versions.length / 2)]!;
    const resumed = await collect(
      (await viewer.live.updates({ sessionId, afterVersion: 0, lastEventId: String(resumeAt) })) as AsyncIterable<unknown>,
      () => true,
    );
    expect(resumed[0]!.entries[0]!.version).toBe(resumeAt + 1);
    await collect(c, () => true);
  });

  it("ends with UNAUTHORIZED at the next batch once the token is revoked or the user disabled (nothing more is sent)", async () => {
    const { sessionId, view } = await proposalAwaitingConfirm("sv-revoke");
    const reader = await api.user("viewer");
    const { token, id: tokenId } = await createApiToken(api.deps, reader.id, { name: "stream" });
    // Through the real context factory: the stream asks the request's own credentials again.
    const ctx = await createContextFactory(api.source)({
      req: new Request("http://cats.test/api/trpc/live.updates", { headers: { authorization: `Bearer ${token}` } }),
    });
    const byToken = (await createCaller(ctx).live.updates({ sessionId, afterVersion: view.status.version })) as AsyncIterable<unknown>;
    const byUser = (await api.caller(reader).live.updates({ sessionId, afterVersion: view.status.version })) as AsyncIterable<unknown>;
    const tokenStream = byToken[Symbol.asyncIterator]();
    const userStream = byUser[Symbol.asyncIterator]();
    expect((await tokenStream.next()).done).toBe(false); // the first batch, in sync
    expect((await userStream.next()).done).toBe(false);

    // The token revoked: its stream ends; the same user's cookie stream goes on.
    await revokeApiToken(api.deps, { id: tokenId }, { userId: reader.id, isAdmin: false });
    await operator.tasks.followUp({ sessionId, text: "anyone still watching?" });
    await expect(tokenStream.next()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect((await userStream.next()).done).toBe(false);
    // The user disabled: that stream ends too.
    await api.prisma.user.update({ where: { id: reader.id }, data: { disabledAt: new Date() } });
    await operator.tasks.followUp({ sessionId, text: "and now?" });
    await expect(userStream.next()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("a session cookie's stream ends with UNAUTHORIZED at the next batch once the cookie expires or the browser sessions end", async () => {
    const { sessionId, view } = await proposalAwaitingConfirm("sv-cookie");
    const reader = await api.user("viewer");
    // Through the real context factory, as the route builds it: the cookie is read once, the
    // user before every batch.
    const streamWith = async (cookie: string) => {
      const ctx = await createContextFactory(api.source)({
        req: new Request("http://cats.test/api/trpc/live.updates", { headers: { cookie } }),
      });
      expect(ctx.user?.id).toBe(reader.id);
      return ((await createCaller(ctx).live.updates({ sessionId, afterVersion: view.status.version })) as AsyncIterable<unknown>)[
        Symbol.asyncIterator
      ]();
    };
    const lasting = await streamWith(await api.sessionCookie(reader.id));
    // next-auth accepts a token up to 15 s past its expiry: this one is past it 5 s from now.
    const expiring = await streamWith(
      `next-auth.session-token=${await encode({ token: { sub: reader.id }, secret: TEST_SECRET, maxAge: -10 })}`,
    );
    expect((await lasting.next()).done).toBe(false); // the first batch, in sync
    expect((await expiring.next()).done).toBe(false);

    await new Promise((r) => setTimeout(r, 5_500));
    await operator.tasks.followUp({ sessionId, text: "still there?" });
    await expect(expiring.next()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect((await lasting.next()).done).toBe(false);
    // Signed out everywhere: the cookie that was valid a moment ago no longer counts.
    await endBrowserSessions(api.prisma, reader.id);
    await operator.tasks.followUp({ sessionId, text: "and now?" });
    await expect(lasting.next()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("is refused to anonymous callers", async () => {
    await expect(api.caller(null).live.updates({ sessionId: "s-x" })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});

describe("live.output", () => {
  it("returns a blob the session references, capped with a truncated flag; any other blob is NOT_FOUND", async () => {
    const { sessionId, view } = await proposalAwaitingConfirm("sv-output");
    const proposal = view.entries.find((e) => e.detail.kind === "agent_output");
    if (proposal?.detail.kind !== "agent_output") throw new Error("no proposal");
    const full = await viewer.live.output({ sessionId, blob: proposal.detail.raw.blob });
    expect(full).toMatchObject({ text: "Proposal: sum subtracts; make it add.", truncated: false, size: proposal.detail.raw.size });
    const cut = await viewer.live.output({ sessionId, blob: proposal.detail.raw.blob, maxBytes: 8 });
    expect(cut).toMatchObject({ text: "Proposal", truncated: true });

    const elsewhere = await putBlob(db.pool, "another session's secret output");
    await expect(viewer.live.output({ sessionId, blob: elsewhere.blob })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(viewer.live.output({ sessionId, blob: "x".repeat(64) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("failures", () => {
  it("a reviewer's invalid JSON shows as schema_invalid with a one-line diagnosis, on the output and on the outcome", async () => {
    const projectId = await h.project("sv-invalid", {
      coder: [coderFix],
      reviewer: [{ reply: "LGTM, ship it!" }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await operator.tasks.start({ projectId, prompt: "Fix sum()", mode: "implementation" });
    await h.waitFor(sessionId, "finished", (s) => s.status === "finished");
    const view = await viewer.live.session({ sessionId });
    const rejected = view.entries.find((e) => e.detail.kind === "agent_output" && e.detail.role === "reviewer");
    expect(rejected?.failure).toMatchObject({
      errorClass: "schema_invalid",
      diagnosis: expect.stringMatching(/^reviewer output rejected: /),
    });
    expect(rejected!.failure!.diagnosis).not.toContain("\n");
    expect(view.status).toMatchObject({ outcome: "review_schema_invalid", final: { failure: { errorClass: "schema_invalid" } } });
    expect(view.entries.find((e) => e.detail.kind === "finalized")?.failure?.errorClass).toBe("schema_invalid");
  });
});
