// `/task <prompt>` in a conversation (req W13, server/conversations/task-command.ts), over HTTP
// as a client sends it: an operator's command starts one task on the conversation's project
// with the conversation's latest messages attached; the conversation records the command and
// the session (TaskStartedFromConversation), the task where it came from (TaskStarted.origin);
// no agent answers it. Sent twice with one key it starts one task and answers the same. A
// viewer's, an empty one and one in an ended conversation are refused, and nothing is recorded.
import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness, ofType, type Harness } from "../helpers/tasks";
import { chatAgent, conversationOf, expectDecidedExactly, waitForConversation } from "../helpers/conversations";

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
let operator: CurrentUser;
let viewer: CurrentUser;
let tokens: Record<"operator" | "viewer", string>;

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
  await h.startRunner(undefined, { concurrency: 2 });
  await h.project("chattask", {
    coder: chatAgent("ada", { reply: ["Split it by words first, then by dashes."] }),
    reviewer: chatAgent("bo", { reply: ["Agreed."] }),
    tester: chatAgent("cy", {}),
  });
  operator = await api.user("operator");
  viewer = await api.user("viewer");
  tokens = {
    operator: (await api.caller(operator).tokens.create({ name: "chat" })).token,
    viewer: (await api.caller(viewer).tokens.create({ name: "chat" })).token,
  };
});

/** `conversations.post` over HTTP as `who`, with an idempotency key. */
async function post(who: "operator" | "viewer", input: { sessionId: string; text: string }, key = crypto.randomUUID()) {
  const res = await handleTrpc(
    new Request("http://cats.test/api/trpc/conversations.post", {
      method: "POST",
      headers: { authorization: `Bearer ${tokens[who]}`, "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(input),
    }),
    createContextFactory(api.source),
  );
  const body = JSON.parse(await res.text()) as {
    result?: { data: { version: number; posted: number; calls: number; task: { sessionId: string; version: number } | null } };
    error?: { message: string; data: { code: string; zodError?: { fieldErrors?: Record<string, string[]> } } };
  };
  return { status: res.status, body, replayed: res.headers.get("idempotent-replayed") === "true" };
}

/** A conversation on the project where ada answered a question: its last messages are the context. */
async function talkedConversation(title: string) {
  const { sessionId } = await api
    .caller(operator)
    .conversations.start({ projectId: "chattask", title, message: "@ada how do we split slugify()?" });
  await waitForConversation(db.store, sessionId, "ada's reply", (c) => c.thread.length === 2 && Object.keys(c.state.inFlight).length === 0);
  return sessionId;
}

const tasksFrom = async (conversationId: string) =>
  (
    await db.pool.query<{ stream_id: string }>(
      "SELECT stream_id FROM events WHERE type = 'TaskStarted' AND data->'origin'->>'conversationId' = $1",
      [conversationId],
    )
  ).rows.map((r) => r.stream_id);

describe("/task in a conversation", () => {
  it("an operator's /task starts one task with the conversation as context, both streams linked; the same key again is the same answer", async () => {
    const sessionId = await talkedConversation("Slugify split");
    const before = (await conversationOf(db.store, sessionId)).events.at(-1)!.version;
    const key = crypto.randomUUID();
    const text = "/task split slugify() into words and dashes";
    const [a, b] = await Promise.all([post("operator", { sessionId, text }, key), post("operator", { sessionId, text }, key)]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(b).toMatchObject({ status: 200, body: a.body });
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    const answer = a.body.result!.data;
    expect(answer).toMatchObject({ version: before + 1, posted: before + 1, calls: 0, task: { sessionId: expect.stringMatching(/^s-/) } });
    const taskId = answer.task!.sessionId;
    // Later again: the kept answer, still one task.
    expect(await post("operator", { sessionId, text }, key)).toMatchObject({ status: 200, body: a.body, replayed: true });
    expect(await tasksFrom(sessionId)).toEqual([taskId]);

    // The conversation: the command as posted, by the operator, naming the session; nothing after it.
    const { events, loaded } = await conversationOf(db.store, sessionId);
    expect(events.filter((e) => e.version > before).map((e) => ({ type: e.type, data: e.data }))).toEqual([
      { type: "TaskStartedFromConversation", data: { by: `user:${operator.id}`, text, sessionId: taskId } },
    ]);
    expectDecidedExactly(events);
    // No agent answers it: no call, no message to the mode, the turns as they were.
    expect(ofType(events, "AgentCallScheduled")).toHaveLength(1);
    expect(ofType(events, "MessagePosted")).toHaveLength(1);
    expect(loaded.state).toMatchObject({ turns: 1, inFlight: {} });
    const pending = await db.pool.query("SELECT id FROM steps WHERE session_id = $1 AND state <> 'completed'", [sessionId]);
    expect(pending.rows).toEqual([]);

    // The task: on the conversation's project, its prompt the person's with the conversation's last messages, its origin the command.
    const task = await db.store.readStream(taskId);
    const started = task.find((e) => e.type === "TaskStarted")!;
    expect(started.metadata.actor).toEqual({ kind: "user", id: operator.id });
    const config = started.data as { prompt: string; project: { id: string }; origin: unknown };
    expect(config.project.id).toBe("chattask");
    expect(config.origin).toEqual({ conversationId: sessionId, version: before + 1 });
    expect(config.prompt).toBe(
      "split slugify() into words and dashes\n\n" +
        `## Context from conversation "Slugify split" (${sessionId})\n\nIts latest messages, oldest first:\n` +
        "\n- a person: @ada how do we split slugify()?\n- @ada: Split it by words first, then by dashes.",
    );
    expect(task.find((e) => e.type === "SessionCreated")!.data).toMatchObject({ title: "split slugify() into words and dashes" });
    // Both in one transaction, and the key notes both.
    expect(started.txId).toBe(events.at(-1)!.txId);
    const effects = await db.pool.query<{ effects: Array<{ streamId: string }> }>("SELECT effects FROM command_keys WHERE key = $1", [key]);
    expect(effects.rows[0]!.effects.map((e) => e.streamId).sort()).toEqual([sessionId, taskId].sort());

    // The session page's header links back; the conversation's view links to the session.
    const view = await api.caller(viewer).live.session({ sessionId: taskId });
    expect(view.header.conversation).toEqual({ id: sessionId, title: "Slugify split", state: "open", version: before + 1 });
    const thread = await api.caller(viewer).conversations.get({ sessionId });
    expect(thread.entries.at(-1)).toMatchObject({ kind: "task", text, sessionId: taskId, byName: "Test operator" });
  });

  it("another key is another command: a second task", async () => {
    const sessionId = await talkedConversation("Twice");
    const one = await post("operator", { sessionId, text: "/task first" });
    const two = await post("operator", { sessionId, text: "/task first" });
    expect(two.body.result!.data.task!.sessionId).not.toBe(one.body.result!.data.task!.sessionId);
    expect(await tasksFrom(sessionId)).toHaveLength(2);
  });

  it("a viewer's /task is refused (the operator role), and nothing is recorded", async () => {
    const sessionId = await talkedConversation("Viewer");
    const before = (await conversationOf(db.store, sessionId)).events.length;
    const r = await post("viewer", { sessionId, text: "/task do it" });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ message: "this needs the operator role (you are viewer)", data: { code: "FORBIDDEN" } });
    expect((await conversationOf(db.store, sessionId)).events.length).toBe(before);
    expect(await tasksFrom(sessionId)).toEqual([]);
  });

  it("an empty /task is refused with the field named, and nothing is recorded; /tasks is an ordinary message", async () => {
    const sessionId = await talkedConversation("Empty");
    const before = (await conversationOf(db.store, sessionId)).events.length;
    for (const text of ["/task", "/task    ", "/task\n\n"]) {
      const r = await post("operator", { sessionId, text });
      expect(r.status, JSON.stringify(text)).toBe(400);
      expect(r.body.error).toMatchObject({
        message: "/task needs a prompt: /task <what the task is>",
        data: { code: "BAD_REQUEST", zodError: { fieldErrors: { text: ["/task needs a prompt: /task <what the task is>"] } } },
      });
    }
    expect((await conversationOf(db.store, sessionId)).events.length).toBe(before);
    expect(await tasksFrom(sessionId)).toEqual([]);

    const ordinary = await post("operator", { sessionId, text: "/tasks are for later" });
    expect(ordinary.body.result!.data.task).toBeNull();
    const { events } = await conversationOf(db.store, sessionId);
    expect(events.at(-1)).toMatchObject({ type: "MessagePosted", data: { text: "/tasks are for later" } });
    expect(await tasksFrom(sessionId)).toEqual([]);
  });

  it("in an ended conversation it is refused (CONFLICT) and no task is started", async () => {
    const sessionId = await talkedConversation("Ended");
    await api.caller(operator).conversations.terminate({ sessionId, reason: "done" });
    const before = (await conversationOf(db.store, sessionId)).events.length;
    const r = await post("operator", { sessionId, text: "/task too late" });
    expect(r.status).toBe(409);
    expect(r.body.error!.message).toBe("the conversation was terminated: nothing more happens in it");
    expect((await conversationOf(db.store, sessionId)).events.length).toBe(before);
    expect(await tasksFrom(sessionId)).toEqual([]);
    const prompted = await db.pool.query("SELECT id FROM sessions WHERE title = 'too late'");
    expect(prompted.rows).toEqual([]);
  });
});
