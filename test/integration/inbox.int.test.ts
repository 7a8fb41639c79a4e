// The attention inbox and webhooks (docs/operations.md): a session that waits for a confirm or ends
// escalated lands in the inbox, delivered live by the web process's LISTEN connection (the
// inbox feed has no poll: only a NOTIFY can bring it); a project's webhook receives the news
// as a POST, and a receiver that hangs or answers 500 is retried with backoff, each attempt
// recorded; who acknowledged what is an event; filters by project and "mine".
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "../../server/errors";
import { registerProject } from "../../server/projects/config-edits";
import { createPool } from "../../server/db/pool";
import { acknowledge, countInbox, followInbox, InboxCountFeed, readInbox, type Inbox } from "../../server/sessions/inbox";
import { SessionEventsListener } from "../../server/sessions/view/listener";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, reviewChanges, testPlan, type Harness, ofType } from "../helpers/tasks";
import { startTcpProxy } from "../helpers/tcp-proxy";
import pg from "pg";

let db: TestDatabase;
let h: Harness;
let receiver: http.Server;
let receiverUrl = "";
/** What the receiver does with each POST in turn: hang (never answer), or answer with a status. */
const plan: Array<"hang" | number> = [];
const received: Array<{ body: Record<string, unknown>; answered: "hang" | number }> = [];
const hanging: http.ServerResponse[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      const answer = plan.shift() ?? 200;
      received.push({ body: JSON.parse(body) as Record<string, unknown>, answered: answer });
      if (answer === "hang") hanging.push(res);
      else res.writeHead(answer).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/T0KEN-in-the-path`;
  await h.startRunner();
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  await new Promise((r) => receiver.close(r));
});

const deps = () => ({ store: db.store, pool: db.pool });
const alice = { kind: "user" as const, id: "alice" };
const agents = {
  coder: { kind: "scripted" as const, id: "coder-sim", responses: [{ reply: "Proposal: change sum()." }] },
  reviewer: { kind: "scripted" as const, id: "reviewer-sim", responses: [{ reply: "Looks risky." }, { reply: reviewChanges() }] },
  tester: { kind: "scripted" as const, id: "tester-sim", responses: [{ reply: "Testable." }, { reply: testPlan() }] },
};

/** The next inbox the live feed yields that satisfies `test`, or a timeout naming what it saw. */
async function nextInbox(feed: AsyncGenerator<Inbox>, test: (inbox: Inbox) => boolean, what: string, timeoutMs = 5_000): Promise<Inbox> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = deadline - Date.now();
    const next = await Promise.race([feed.next(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(0, left)))]);
    if (next === null) throw new Error(`the live inbox did not show ${what} within ${timeoutMs} ms`);
    if (next.done) throw new Error("the live inbox ended");
    if (test(next.value)) return next.value;
  }
}

describe("the attention inbox", () => {
  it("shows a session waiting for a confirm and one escalated at the loop limit as they happen; acknowledging is recorded; filters work", async () => {
    await registerProject(deps(), { id: "inbox-a", name: "A", repoPath: h.repo, allowlist: [["node", "--test", "**"]], agents }, testActor);
    await registerProject(deps(), { id: "inbox-b", name: "B", repoPath: h.repo, allowlist: [["node", "--test", "**"]], agents }, testActor);
    // A reviewer that always asks for changes, under a cap of one iteration.
    const strict = { ...agents, reviewer: { kind: "scripted" as const, id: "strict-reviewer", responses: [{ reply: reviewChanges() }] } };
    await registerProject(
      deps(),
      { id: "inbox-c", name: "C", repoPath: h.repo, allowlist: [["node", "--test", "**"]], agents: strict, maxIterations: 1 },
      testActor,
    );
    const listener = new SessionEventsListener(() => new pg.Client({ connectionString: db.url }));
    const controller = new AbortController();
    const feed = followInbox(db.pool, listener, {}, "user:alice", controller.signal);
    try {
      expect((await feed.next()).value).toEqual({ count: 0, items: [] });

      // A proposal waits for an operator's confirm.
      const waiting = await startTask(deps(), { projectId: "inbox-a", prompt: "Make sum() add", mode: "proposal" }, alice);
      const inbox = await nextInbox(feed, (i) => i.items.some((x) => x.sessionId === waiting.sessionId), "the waiting session");
      expect(inbox.items.find((x) => x.sessionId === waiting.sessionId)).toMatchObject({
        attention: "waiting",
        state: "awaiting_operator_confirm",
        projectId: "inbox-a",
        createdBy: "user:alice",
      });

      // An implementation whose reviewer keeps asking for changes ends at the cap (1): escalated.
      const escalated = await startTask(deps(), { projectId: "inbox-c", prompt: "Make sum() add", mode: "implementation" }, testActor);
      const later = await nextInbox(feed, (i) => i.items.some((x) => x.sessionId === escalated.sessionId), "the escalated session", 30_000);
      expect(later.items.find((x) => x.sessionId === escalated.sessionId)).toMatchObject({
        attention: "escalated",
        outcome: "max_iterations_reached",
      });
      expect(later.count).toBe(2);
      // The header's feed: the count only, no items read or sent.
      const header = followInbox(db.pool, listener, { countOnly: true }, "user:alice", controller.signal);
      expect((await header.next()).value).toEqual({ count: 2, items: [] });
      await header.return(undefined);

      // Filters: by project, and "mine" (sessions the asking user started).
      expect((await readInbox(db.pool, { projectId: "inbox-b" }, "user:alice")).count).toBe(0);
      expect((await readInbox(db.pool, { mine: true }, "user:alice")).items.map((x) => x.sessionId)).toEqual([waiting.sessionId]);

      // Acknowledged: it leaves the inbox, and the session says who took note.
      await acknowledge(db.store, db.pool, escalated.sessionId, alice);
      await nextInbox(feed, (i) => !i.items.some((x) => x.sessionId === escalated.sessionId), "the acknowledged session gone");
      const acked = (await db.store.readStream(escalated.sessionId)).filter((e) => e.type === "AttentionAcknowledged");
      expect(acked.map((e) => [e.data, e.metadata.actor])).toEqual([[{ attention: "escalated" }, alice]]);
      const again = await acknowledge(db.store, db.pool, escalated.sessionId, testActor).catch((e: unknown) => e);
      expect(isAppError(again, "CONFLICT")).toBe(true);
      expect((again as Error).message).toBe(`session ${escalated.sessionId} was acknowledged already`);

      // Confirmed, the waiting session needs nobody any more.
      await confirmTask(deps(), { sessionId: waiting.sessionId }, alice);
      await nextInbox(feed, (i) => !i.items.some((x) => x.sessionId === waiting.sessionId), "the confirmed session gone");
      await h.waitFor(waiting.sessionId, "finished", (s) => s.status === "finished", 30_000);
    } finally {
      controller.abort();
      await feed.return(undefined);
      await listener.close();
    }
  });
});

describe("the header's count", () => {
  it("is read once per change for every page of the process; a reading that fails ends every stream, and the next reads anew", async () => {
    await registerProject(
      deps(),
      { id: "inbox-count", name: "Count", repoPath: h.repo, allowlist: [["node", "--test", "**"]], agents },
      testActor,
    );
    const waiting = [];
    for (let i = 0; i < 2; i++) {
      const { sessionId } = await startTask(deps(), { projectId: "inbox-count", prompt: `Make sum() add ${i}`, mode: "proposal" }, alice);
      await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm", 30_000);
      waiting.push(sessionId);
    }
    const before = await countInbox(db.pool);

    // The count read through a proxy that can be stopped; woken by a listener of its own.
    const proxy = await startTcpProxy(Number(new URL(db.url).port));
    const pool = createPool(proxy.url(db.url), 2, { applicationName: "inbox-count-feed", connectTimeoutMs: 1_000 });
    let reads = 0;
    pool.on("acquire", () => reads++);
    const listener = new SessionEventsListener(() => new pg.Client({ connectionString: db.url }));
    const feed = new InboxCountFeed(pool, listener, 20);
    const controller = new AbortController();
    const pages = Array.from({ length: 20 }, () => feed.follow(AbortSignal.any([controller.signal])));
    const next = () => Promise.all(pages.map((p) => p.next()));
    try {
      expect((await next()).map((r) => r.value)).toEqual(pages.map(() => before));
      expect(reads).toBe(1);

      // One change: every page has the new count, read once.
      await acknowledge(db.store, db.pool, waiting[0]!, alice);
      expect((await next()).map((r) => r.value)).toEqual(pages.map(() => before - 1));
      expect(reads).toBeGreaterThanOrEqual(2);
      expect(reads).toBeLessThanOrEqual(3);

      // The database away as a change rings: the reading fails, and every page's stream ends with it.
      await db.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'inbox-count-feed'");
      await proxy.stop();
      await acknowledge(db.store, db.pool, waiting[1]!, alice);
      const ended = await Promise.allSettled(pages.map((p) => p.next()));
      expect(ended.map((r) => r.status)).toEqual(pages.map(() => "rejected"));
      expect((ended[0] as PromiseRejectedResult).reason).toBeInstanceOf(Error);

      // Back: a page that opens its stream again gets the count as it is now.
      await proxy.start();
      const again = feed.follow(controller.signal);
      expect((await again.next()).value).toBe(before - 2);
      await again.return(undefined);
    } finally {
      controller.abort();
      await Promise.allSettled(pages.map((p) => p.return(undefined)));
      await listener.close();
      await pool.end();
      await proxy.close();
    }
  });
});

describe("a project's webhook", () => {
  it("gets a POST when a session needs a person; a receiver that hangs, then fails, is retried with backoff and every attempt is recorded", async () => {
    await registerProject(
      deps(),
      {
        id: "hooked",
        name: "Hooked",
        repoPath: h.repo,
        allowlist: [["node", "--test", "**"]],
        agents,
        webhook: { url: receiverUrl, format: "json" },
        // The receiver is on 127.0.0.1: the admin allows it (docs/configuration.md, "Outbound calls").
        settings: { access: { privateHosts: ["127.0.0.1"] } },
      },
      testActor,
    );
    plan.push("hang", 500); // then 200
    const { sessionId } = await startTask(deps(), { projectId: "hooked", prompt: "Make sum() add", mode: "proposal" }, alice);
    await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");

    const delivered = async () => {
      const events = await db.store.readStream(sessionId);
      const hook = ofType<{ stepId: string; kind: string }>(events, "StepScheduled").find((s) => s.kind === "webhook");
      return hook ? events.filter((e) => (e.data as { stepId?: string }).stepId === hook.stepId) : [];
    };
    const deadline = Date.now() + 30_000;
    while (!(await delivered()).some((e) => e.type === "StepCompleted")) {
      if (Date.now() > deadline) throw new Error(`no delivery: ${JSON.stringify((await delivered()).map((e) => [e.type, e.data]))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const attempts = (await delivered()).filter((e) => e.type !== "StepScheduled" && e.type !== "StepStarted");
    expect(
      attempts.map((e) => [
        e.type,
        (e.data as { errorClass?: string }).errorClass ?? null,
        (e.data as { message?: string }).message ?? null,
      ]),
    ).toEqual([
      ["StepFailed", "provider_network_error", "webhook not delivered: unreachable"],
      ["StepFailed", "provider_network_error", "webhook not delivered: http_error 500"],
      ["StepCompleted", null, null],
    ]);
    expect((attempts[2]!.data as { output: unknown }).output).toEqual({ delivered: true, status: 200 });
    expect(received.map((r) => r.answered)).toEqual(["hang", 500, 200]);
    expect(received[2]!.body).toEqual({
      event: "session.attention",
      sessionId,
      projectId: "hooked",
      iteration: 1,
      attention: "waiting",
      state: "awaiting_operator_confirm",
      outcome: null,
      reason: null,
      url: `http://catcafe.test/sessions/${sessionId}`,
    });
    // The URL (and its token) is nowhere in the session's events.
    expect(JSON.stringify(await db.store.readStream(sessionId))).not.toContain("T0KEN");
    // The session itself was not disturbed: it still waits for its confirm.
    expect((await h.state(sessionId)).fsm).toBe("awaiting_operator_confirm");
  }, 60_000);

  it("refuses a webhook URL that is not http(s)", async () => {
    const err = await registerProject(
      deps(),
      { id: "bad-hook", name: "Bad", repoPath: h.repo, allowlist: [], agents, webhook: { url: "ftp://example.com/x", format: "json" } },
      testActor,
    ).catch((e: Error) => e);
    expect((err as Error).message).toContain("a webhook URL must start with http:// or https://");
  });
});
