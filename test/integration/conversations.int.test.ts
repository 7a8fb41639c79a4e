// Conversations (req C1–C8) through the real runner on a real database and git: each mode's
// calls run as steps, each reply is decided on in its result's transaction, and every event a
// conversation records is exactly what its decider makes of the commands (replayed here).
// The loop guard stops agents that call each other, termination is final, bad input is
// refused with the field named and nothing recorded changes.
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "../../server/errors";
import { getMode, noteProgress, postMessage, setMode, startConversation, terminateConversation } from "../../server/conversations/service";
import { forkAnySession } from "../../server/api/fork";
import { exportSession } from "../../server/export";
import { HIDDEN_FOR_VIEWERS, viewerEventData } from "../../server/export/redact";
import { createTestDatabase, rejection, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, gitIn, ofType, type Harness } from "../helpers/tasks";
import { chatAgent, conversationOf, expectDecidedExactly, waitForConversation } from "../helpers/conversations";
import { isConversationEvent } from "../../server/conversations/fold";
import { auditConversation } from "../../server/conversations/audit";

let db: TestDatabase;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner(undefined, { concurrency: 6 });
  await h.project("chat", {
    coder: chatAgent("ada", { reply: ["I would start with the schema. @bo, what do you think?"], ballot: [ballot("postgres", 0.9)] }, [
      "database",
      "sql",
    ]),
    reviewer: chatAgent("bo", { reply: ["Agreed, the schema first."], ballot: [ballot("sqlite", 0.6)] }, ["css", "accessibility"]),
    tester: chatAgent("cy", { reply: ["Tests for it next."], ballot: [ballot("postgres", 0.4)] }, ["tests", "security"]),
  });
  await h.project("slowvote", {
    coder: chatAgent("ada", { ballot: [ballot("a", 0.9)] }),
    reviewer: chatAgent("bo", { ballot: [ballot("b", 0.5)] }),
    tester: { ...chatAgent("cy", {}), byOutput: { ballot: [{ reply: ballot("b", 0.9), chunkDelayMs: 400 }] } },
  });
  await h.project("pingpong", {
    coder: chatAgent("ping", { reply: ["@pong your turn"] }),
    reviewer: chatAgent("pong", { reply: ["@ping no, yours"] }),
  });
});

const deps = () => ({ store: db.store, pool: db.pool });
const idle = (c: { state: { inFlight: Record<string, unknown> } }) => Object.keys(c.state.inFlight).length === 0;

function ballot(choice: string, confidence: number): string {
  return JSON.stringify({ choice, rationale: `because ${choice}`, confidence });
}

async function sessionRow(id: string) {
  const r = await db.pool.query<{
    workflow: string;
    state: string;
    mode: string;
    project_id: string;
    attention: string | null;
    outcome: string | null;
  }>("SELECT workflow, state, mode, project_id, attention, outcome FROM sessions WHERE id = $1", [id]);
  return r.rows[0]!;
}

describe("free discussion", () => {
  it("a person's mention calls the agent; its reply's mention calls the next; every event is what the decider made", async () => {
    const { sessionId } = await startConversation(deps(), { projectId: "chat", message: "@ada how do we store the orders?" }, testActor);
    const { events, loaded } = await waitForConversation(
      db.store,
      sessionId,
      "ada and bo to reply",
      (c, ev) => ofType(ev, "AgentReplied").length === 2 && idle(c),
    );
    expect(ofType<{ agent: string; text: string }>(events, "AgentReplied").map((r) => r.agent)).toEqual(["ada", "bo"]);
    expect(ofType<{ caller: string; chain: string[] }>(events, "AgentCallScheduled")).toMatchObject([
      { caller: "person", chain: ["ada"] },
      { caller: "ada", chain: ["ada", "bo"] },
    ]);
    expect(loaded.state).toMatchObject({ status: "open", mode: "free_discussion", stalled: false, turns: 2 });
    expectDecidedExactly(events);
    // Each call was a step, claimed, run and completed exactly once.
    const steps = await db.pool.query("SELECT kind, state, attempt FROM steps WHERE session_id = $1", [sessionId]);
    expect(steps.rows).toEqual([
      { kind: "conversation_call", state: "completed", attempt: 1 },
      { kind: "conversation_call", state: "completed", attempt: 1 },
    ]);
    expect(await sessionRow(sessionId)).toMatchObject({
      workflow: "conversation",
      state: "open",
      mode: "free_discussion",
      project_id: "chat",
    });
  });

  it("the audit finds an event nobody decided (a call appended by hand) and a decision changed after the fact", async () => {
    const { sessionId } = await startConversation(deps(), { projectId: "chat", message: "@cy hello" }, testActor);
    const { events } = await waitForConversation(
      db.store,
      sessionId,
      "cy's reply",
      (c, ev) => ofType(ev, "AgentReplied").length === 1 && idle(c),
    );
    expect(auditConversation(events)).toEqual([]);
    const changed = events.map((e) =>
      e.type === "AgentCallScheduled" ? { ...e, data: { ...(e.data as object), agent: "bo", chain: ["bo"] } } : e,
    );
    expect(auditConversation(changed)).toEqual([expect.stringMatching(/^event \d+ \(MessagePosted\): recorded .* decided /)]);
    const stray = { callId: "00000000-0000-4000-8000-000000000001", agent: "bo", prompt: "x", caller: "person", chain: ["bo"] };
    await db.store.append(sessionId, events.at(-1)!.version, [{ type: "AgentCallScheduled", data: stray }], { actor: testActor });
    expect(auditConversation(await db.store.readStream(sessionId))).toEqual([
      `event ${events.at(-1)!.version + 1} (AgentCallScheduled) answers no command: it was not decided`,
    ]);
  });

  it("agents that call each other stall the conversation (A→B→A): nobody is called until a person writes", async () => {
    const { sessionId } = await startConversation(deps(), { projectId: "pingpong", message: "@ping start" }, testActor);
    const { events } = await waitForConversation(db.store, sessionId, "the stall", (c) => c.state.stalled && idle(c));
    const stalled = ofType<{ cycle: string[] | null; reason: string }>(events, "ConversationStalled");
    expect(stalled).toEqual([expect.objectContaining({ cycle: ["ping", "pong", "ping"] })]);
    expect(ofType(events, "AgentCallScheduled")).toHaveLength(2);
    expect(await sessionRow(sessionId)).toMatchObject({ state: "stalled", attention: "waiting" });
    expectDecidedExactly(events);
    // A person writes: it runs again, and stalls again the same way.
    await postMessage(deps(), { sessionId, text: "@pong go on" }, testActor);
    expect((await sessionRow(sessionId)).state).toBe("open");
    const again = await waitForConversation(
      db.store,
      sessionId,
      "the second stall",
      (_c, ev) => ofType(ev, "ConversationStalled").length === 2,
    );
    expectDecidedExactly(again.events);
  });
});

describe("the conversation's worktree", () => {
  it("is made for an agent that touches files (at the commit the conversation started from), and not for one that never does", async () => {
    await h.project("files", {
      coder: { ...chatAgent("writer", {}), byOutput: { reply: [{ reply: "wrote notes", files: { "notes.md": "# notes\n" } }] } },
    });
    const { sessionId } = await startConversation(deps(), { projectId: "files", message: "@writer take notes" }, testActor);
    const { events } = await waitForConversation(db.store, sessionId, "the reply", (_c, ev) => ofType(ev, "AgentReplied").length === 1);
    const worktree = path.join(h.workspacesRoot, sessionId);
    expect(fs.readFileSync(path.join(worktree, "notes.md"), "utf8")).toBe("# notes\n");
    const [setup] = ofType<{ project: { baseCommit: string } }>(events, "ConversationSetup");
    expect(gitIn(worktree, "rev-parse", "HEAD")).toBe(setup!.project.baseCommit);

    const talk = await startConversation(deps(), { projectId: "chat", message: "@bo hello" }, testActor);
    await waitForConversation(db.store, talk.sessionId, "the reply", (_c, ev) => ofType(ev, "AgentReplied").length === 1);
    expect(fs.existsSync(path.join(h.workspacesRoot, talk.sessionId))).toBe(false);
  });
});

describe("voting", () => {
  it("every voter answers alone; the tally is an event and the same on replay; the winner is the most weight", async () => {
    const { sessionId } = await startConversation(
      deps(),
      { projectId: "chat", mode: "voting", modeConfig: { quorum: 2 }, message: "Which database?" },
      testActor,
    );
    const { events } = await waitForConversation(db.store, sessionId, "the tally", (_c, ev) =>
      ofType<{ note: { kind: string } }>(ev, "ModeNoted").some((n) => n.note.kind === "tallied"),
    );
    const scheduled = ofType<{ prompt: string }>(events, "AgentCallScheduled");
    expect(scheduled).toHaveLength(3);
    // A voter is shown the question, never another's ballot.
    const inputs = await db.pool.query<{ input: { context: unknown[]; output: string } }>(
      "SELECT input FROM steps WHERE session_id = $1 AND kind = 'conversation_call'",
      [sessionId],
    );
    expect(inputs.rows.map((r) => [r.input.output, r.input.context])).toEqual([
      ["ballot", []],
      ["ballot", []],
      ["ballot", []],
    ]);
    const tally = ofType<{ note: Record<string, unknown> }>(events, "ModeNoted").find((n) => n.note.kind === "tallied")!.note;
    expect(tally).toMatchObject({ outcome: "winner", winner: "postgres", absent: [], reason: "the most weight (2)" });
    expectDecidedExactly(events);
    const mode = await getMode(deps(), sessionId);
    expect(mode).toMatchObject({ mode: "voting", state: { current_step: null, step_history: ["round-1"] } });
  });

  it("a voter that does not answer in time does not block the tally: it is listed absent, and its late ballot changes nothing", async () => {
    const { sessionId } = await startConversation(
      deps(),
      { projectId: "slowvote", mode: "voting", modeConfig: { quorum: 2, timeoutMs: 1000 }, message: "a or b?" },
      testActor,
    );
    const { events } = await waitForConversation(
      db.store,
      sessionId,
      "the tally and cy's late ballot",
      (c, ev) => ofType(ev, "ModeTimedOut").length === 1 && idle(c),
    );
    const types = events.map((e) => e.type).filter((t) => ["ModeTimedOut", "ModeNoted", "AgentReplied"].includes(t));
    expect(types).toEqual(["AgentReplied", "AgentReplied", "ModeTimedOut", "ModeNoted", "AgentReplied"]);
    const tally = ofType<{ note: Record<string, unknown> }>(events, "ModeNoted")[0]!.note;
    // a and b tie on weight (1 each) and ballots: ada's 0.9 confidence beats bo's 0.5.
    expect(tally).toMatchObject({ outcome: "winner", winner: "a", absent: ["cy"] });
    expectDecidedExactly(events);
  });

  it("a ballot that is not valid JSON is rejected with its errors; no quorum is said as such", async () => {
    await h.project("badvote", {
      coder: chatAgent("ada", { ballot: ["I pick a, obviously"] }),
      reviewer: chatAgent("bo", { ballot: [ballot("b", 0.5)] }),
    });
    const { sessionId } = await startConversation(
      deps(),
      { projectId: "badvote", mode: "voting", modeConfig: { quorum: 2 }, message: "a or b?" },
      testActor,
    );
    const { events } = await waitForConversation(db.store, sessionId, "the tally", (_c, ev) =>
      ofType<{ note: { kind: string } }>(ev, "ModeNoted").some((n) => n.note.kind === "tallied"),
    );
    expect(ofType<{ note: Record<string, unknown> }>(events, "ModeNoted").map((n) => n.note)).toEqual([
      { kind: "ballot_rejected", agent: "ada", errors: [expect.stringMatching(/^not valid JSON/)] },
      expect.objectContaining({ kind: "tallied", outcome: "no_quorum", winner: null, reason: "1 valid ballot(s), the quorum is 2" }),
    ]);
    expectDecidedExactly(events);
  });
});

describe("expert routing and SOP", () => {
  it("routes by skill tags with candidates, scores and the reason; no match asks a person and calls nobody", async () => {
    const { sessionId } = await startConversation(deps(), { projectId: "chat", mode: "expert_routing" }, testActor);
    await postMessage(deps(), { sessionId, text: "Is the login form's accessibility fine?" }, testActor);
    await postMessage(deps(), { sessionId, text: "What should we have for lunch?" }, testActor);
    const { events } = await waitForConversation(
      db.store,
      sessionId,
      "bo's answer",
      (c, ev) => ofType(ev, "AgentReplied").length === 1 && idle(c),
    );
    const notes = ofType<{ note: Record<string, unknown> }>(events, "ModeNoted").map((n) => n.note);
    expect(notes[0]).toMatchObject({
      kind: "routed",
      chosen: ["bo"],
      candidates: [{ agent: "bo", score: 1, matched: ["accessibility"] }, {}, {}],
    });
    expect(notes.slice(1)).toEqual([
      expect.objectContaining({ kind: "routed", chosen: [] }),
      expect.objectContaining({ kind: "needs_person", reason: expect.stringContaining("no agent's skills match") }),
    ]);
    expect(ofType(events, "AgentCallScheduled")).toHaveLength(1);
    expectDecidedExactly(events);
  });

  it("runs the steps in order and branches on a reply's field: a change request loops back, approval completes", async () => {
    await h.project("sop", {
      coder: chatAgent("dev", { sop: ["Draft 1.", "Draft 2."] }),
      reviewer: chatAgent("rev", { sop: ['Not yet. {"decision": "changes"}', 'Good. {"decision": "approve"}'] }),
    });
    const modeConfig = {
      steps: [
        { id: "draft", agent: "dev", instruction: "Write it." },
        {
          id: "review",
          agent: "rev",
          instruction: "Review it.",
          branches: [{ field: "decision", equals: "changes", goto: "draft" }],
          next: null,
        },
      ],
    };
    const { sessionId } = await startConversation(
      deps(),
      { projectId: "sop", mode: "sop", modeConfig, message: "A haiku about Postgres" },
      testActor,
    );
    const { events } = await waitForConversation(db.store, sessionId, "the SOP to complete", (_c, ev) =>
      ofType<{ note: { kind: string } }>(ev, "ModeNoted").some((n) => n.note.kind === "sop_completed"),
    );
    expect(ofType<{ agent: string; text: string }>(events, "AgentReplied").map((r) => `${r.agent}: ${r.text}`)).toEqual([
      "dev: Draft 1.",
      'rev: Not yet. {"decision": "changes"}',
      "dev: Draft 2.",
      'rev: Good. {"decision": "approve"}',
    ]);
    expect((await getMode(deps(), sessionId)).state.step_history).toEqual(["draft", "review", "draft", "review"]);
    expectDecidedExactly(events);
  });
});

describe("termination, mode switches and bad input", () => {
  it("termination is final: unclaimed calls are cancelled, a reply that comes later is discarded, nothing more is posted", async () => {
    await h.project("slow", {
      coder: { ...chatAgent("slow", {}), byOutput: { reply: [{ reply: "a slow answer", chunkDelayMs: 150 }] } },
      reviewer: chatAgent("quick", { reply: ["quick answer"] }),
    });
    const { sessionId } = await startConversation(deps(), { projectId: "slow", message: "@slow think about it" }, testActor);
    const running = async () =>
      (await db.pool.query("SELECT 1 FROM steps WHERE session_id = $1 AND state = 'running'", [sessionId])).rowCount === 1;
    for (let i = 0; i < 100 && !(await running()); i++) await new Promise((r) => setTimeout(r, 20));
    await terminateConversation(deps(), { sessionId, reason: "enough" }, testActor);
    const { events } = await waitForConversation(
      db.store,
      sessionId,
      "the late reply",
      (_c, ev) => ofType(ev, "ReplyDiscarded").length === 1,
    );
    expect(ofType(events, "ReplyDiscarded")).toEqual([expect.objectContaining({ agent: "slow", errorClass: "late" })]);
    expect(ofType(events, "AgentReplied")).toEqual([]);
    expect((await rejection(postMessage(deps(), { sessionId, text: "@quick hello?" }, testActor))).code).toBe("CONFLICT");
    expect(await sessionRow(sessionId)).toMatchObject({ state: "terminated", outcome: "terminated" });
    expectDecidedExactly(events);
  });

  it("termination cancels what no runner claimed yet (a vote's timer): it never fires", async () => {
    const { sessionId } = await startConversation(
      deps(),
      { projectId: "slowvote", mode: "voting", modeConfig: { timeoutMs: 60_000 }, message: "a or b?" },
      testActor,
    );
    await terminateConversation(deps(), { sessionId, reason: "never mind" }, testActor);
    const { events } = await waitForConversation(db.store, sessionId, "every call to end", (c) => idle(c), 15_000);
    const timers = await db.pool.query("SELECT state FROM steps WHERE session_id = $1 AND kind = 'conversation_timer'", [sessionId]);
    expect(timers.rows).toEqual([{ state: "cancelled" }]);
    const [terminated] = ofType<{ cancelled: string[] }>(events, "ConversationTerminated");
    // The calls no runner had claimed and the timer, cancelled with the termination.
    expect(ofType(events, "StepCancelled")).toHaveLength(terminated!.cancelled.length + 1);
    expect(ofType(events, "ModeTimedOut")).toEqual([]);
    // Every call is accounted for once: answered before the end, cancelled with it, or claimed
    // before it and run out, its reply then discarded as late.
    const end = events.find((e) => e.type === "ConversationTerminated")!.version;
    const answered = events.filter((e) => e.type === "AgentReplied");
    expect(answered.every((e) => e.version < end)).toBe(true);
    const discarded = ofType<{ errorClass: string }>(events, "ReplyDiscarded").map((d) => d.errorClass);
    expect(discarded).toEqual(Array(3 - terminated!.cancelled.length - answered.length).fill("late"));
    expectDecidedExactly(events);
  });

  it("an oversized reply is discarded (output_too_large); an agent that fails for good is recorded with its error class and said in the conversation", async () => {
    await h.project("badreply", {
      coder: { ...chatAgent("verbose", {}), byOutput: { reply: [{ reply: "word ".repeat(30_000) }] } },
      reviewer: { ...chatAgent("broken", {}), byOutput: { reply: [{ fault: "auth" }] } },
    });
    const { sessionId } = await startConversation(deps(), { projectId: "badreply", message: "@verbose @broken say something" }, testActor);
    const { events } = await waitForConversation(
      db.store,
      sessionId,
      "both calls to end",
      (c, ev) => idle(c) && ofType(ev, "StepCompleted").length + ofType(ev, "StepFailed").length >= 2,
    );
    expect(ofType(events, "ReplyDiscarded")).toEqual([
      expect.objectContaining({
        agent: "verbose",
        errorClass: "output_too_large",
        reason: "150000 characters, over the 100000 a reply may have",
      }),
    ]);
    expect(ofType(events, "AgentCallFailed")).toEqual([expect.objectContaining({ agent: "broken", errorClass: "provider_auth_error" })]);
    expect(ofType<{ text: string }>(events, "SystemMessage").map((m) => m.text)).toEqual([
      expect.stringMatching(/^@broken could not answer \(provider_auth_error\): /),
    ]);
    expect(ofType(events, "AgentReplied")).toEqual([]);
    expectDecidedExactly(events);
  });

  it("switching mode is an event and a system message; refused while calls are in flight; bad input names the field and records nothing", async () => {
    await h.project("slow2", { coder: { ...chatAgent("slow", {}), byOutput: { reply: [{ reply: "ok", chunkDelayMs: 100 }] } } });
    const { sessionId } = await startConversation(deps(), { projectId: "slow2" }, testActor);
    const before = (await conversationOf(db.store, sessionId)).events.length;
    const refusals = await Promise.all([
      rejection(postMessage(deps(), { sessionId, text: "@nobody are you there?" }, testActor)),
      rejection(setMode(deps(), { sessionId, mode: "debate" }, testActor)),
      rejection(setMode(deps(), { sessionId, mode: "voting", modeConfig: { quorum: 0 } }, testActor)),
      rejection(
        setMode(deps(), { sessionId, mode: "sop", modeConfig: { steps: [{ id: "a", agent: "ghost", instruction: "x" }] } }, testActor),
      ),
      rejection(startConversation(deps(), { projectId: "slow2", mode: "voting", modeConfig: { quorum: 5 } }, testActor)),
    ]);
    expect(refusals.map((e) => [e.code, e.details?.field])).toEqual([
      ["INVALID_INPUT", "text"],
      ["INVALID_INPUT", "mode"],
      ["INVALID_INPUT", "modeConfig"],
      ["INVALID_INPUT", "modeConfig"],
      ["INVALID_INPUT", "modeConfig"],
    ]);
    expect(refusals[0]!.message).toMatch(/no agent @nobody in this conversation \(agents: @slow\)/);
    expect(refusals[3]!.message).toMatch(/modeConfig\.steps\[0\]\.agent: no agent "ghost"/);
    expect((await conversationOf(db.store, sessionId)).events).toHaveLength(before);

    await postMessage(deps(), { sessionId, text: "@slow hi" }, testActor);
    expect((await rejection(setMode(deps(), { sessionId, mode: "voting" }, testActor))).code).toBe("CONFLICT");
    await waitForConversation(db.store, sessionId, "the reply", (c) => idle(c));
    expect(await setMode(deps(), { sessionId, mode: "voting", modeConfig: { quorum: 1 } }, testActor)).toEqual({
      mode: "voting",
      description: expect.stringMatching(/^Voting/),
    });
    await noteProgress(deps(), { sessionId, kind: "test_result", detail: "12 passed" }, testActor);
    const { events } = await conversationOf(db.store, sessionId);
    expect(ofType(events, "SystemMessage")).toEqual([
      { text: expect.stringMatching(/^Mode switched from free_discussion to voting by user:tester/) },
    ]);
    expect(await getMode(deps(), sessionId)).toMatchObject({
      mode: "voting",
      config: { name: "voting", enabled: true, config: { quorum: 1 } },
    });
    expect((await sessionRow(sessionId)).mode).toBe("voting");
    expectDecidedExactly(events);
  });
});

describe("requests that race", () => {
  it("20 posts at once all land, in one order, each decided on the conversation as it was", async () => {
    const { sessionId } = await startConversation(deps(), { projectId: "chat" }, testActor);
    const posted = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postMessage(deps(), { sessionId, text: `@cy question ${i}` }, testActor)),
    );
    expect(new Set(posted.map((p) => p.posted)).size).toBe(20);
    const { events } = await waitForConversation(
      db.store,
      sessionId,
      "every reply",
      (c, ev) => ofType(ev, "AgentReplied").length === 20 && idle(c),
    );
    expect(
      ofType<{ text: string }>(events, "MessagePosted")
        .map((m) => m.text)
        .sort(),
    ).toEqual(Array.from({ length: 20 }, (_, i) => `@cy question ${i}`).sort());
    expectDecidedExactly(events);
  });

  it("a termination racing posts and a mode switch: each post lands before it or is refused; nothing is called or claimed after it", async () => {
    const { sessionId } = await startConversation(deps(), { projectId: "chat" }, testActor);
    const settle = (p: Promise<unknown>) =>
      p.then(
        () => "ok" as const,
        (err: unknown) => (isAppError(err) ? err.code : "error"),
      );
    const outcomes = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => settle(postMessage(deps(), { sessionId, text: `@ada idea ${i}` }, testActor))),
      settle(setMode(deps(), { sessionId, mode: "voting" }, testActor)),
      settle(terminateConversation(deps(), { sessionId, reason: "race" }, testActor)),
      ...Array.from({ length: 10 }, (_, i) => settle(postMessage(deps(), { sessionId, text: `@bo idea ${i}` }, testActor))),
    ]);
    expect(outcomes.every((o) => o === "ok" || o === "CONFLICT")).toBe(true);
    expect(outcomes.at(10 + 1)).toBe("ok"); // the termination itself
    const { events } = await waitForConversation(db.store, sessionId, "every call to end", (c) => idle(c), 20_000);
    const end = events.find((e) => e.type === "ConversationTerminated")!.version;
    for (const type of ["MessagePosted", "AgentCallScheduled", "ModeSwitched"]) {
      expect(
        events.filter((e) => e.type === type).every((e) => e.version < end),
        type,
      ).toBe(true);
    }
    expect(ofType(events, "MessagePosted")).toHaveLength(outcomes.filter((o, i) => i !== 10 && i !== 11 && o === "ok").length);
    // The calls cancelled with the end were never claimed, and no call was claimed after it.
    const [terminated] = ofType<{ cancelled: string[] }>(events, "ConversationTerminated");
    const started = new Set(ofType<{ stepId: string }>(events, "StepStarted").map((e) => e.stepId));
    expect(terminated!.cancelled.filter((id) => started.has(id))).toEqual([]);
    expect(events.filter((e) => e.type === "StepStarted" && e.version > end)).toEqual([]);
    expectDecidedExactly(events);
  });
});

describe("forks of a conversation", () => {
  it("a fork with a call in flight makes that call again; both go on on their own; the parent's events never change", async () => {
    await h.project("forkchat", {
      coder: { ...chatAgent("slow", {}), byOutput: { reply: [{ reply: "slow thoughts", chunkDelayMs: 60 }] } },
      reviewer: chatAgent("quick", { reply: ["quick thoughts"] }),
    });
    const { sessionId } = await startConversation(deps(), { projectId: "forkchat", message: "@slow and @quick, ideas?" }, testActor);
    const atCall = (await conversationOf(db.store, sessionId)).events.at(-1)!.version;
    const parentBefore = await db.store.readStream(sessionId, { toVersion: atCall });
    const fork = await forkAnySession(deps(), { sessionId, atVersion: atCall, reason: "manual", note: "try again" }, testActor);
    expect(fork).toMatchObject({ parentId: sessionId, atVersion: atCall, sessionId: expect.stringMatching(/^c-/) });
    const child = await waitForConversation(
      db.store,
      fork.sessionId,
      "both replies in the fork",
      (c, ev) => ofType(ev, "AgentReplied").length === 2 && idle(c),
    );
    const parent = await waitForConversation(
      db.store,
      sessionId,
      "both replies in the parent",
      (c, ev) => ofType(ev, "AgentReplied").length === 2 && idle(c),
    );
    const reissued = child.events
      .filter((e) => e.version > atCall && e.type === "AgentCallScheduled")
      .map((e) => e.data as { reissues?: string });
    const parentCalls = ofType<{ callId: string }>(parentBefore, "AgentCallScheduled").map((c) => c.callId);
    expect(reissued.map((r) => r.reissues).sort()).toEqual([...parentCalls].sort());
    // The child's replies answer its own calls, the parent's its own.
    const childReplies = ofType<{ callId: string }>(child.events, "AgentReplied").map((r) => r.callId);
    expect(childReplies.some((id) => parentCalls.includes(id))).toBe(false);
    expect((await db.store.readStream(sessionId, { toVersion: atCall })).map((e) => e.eventId)).toEqual(parentBefore.map((e) => e.eventId));
    expectDecidedExactly(child.events);
    expectDecidedExactly(parent.events);
    const row = await db.pool.query("SELECT parent_id, fork_version, workflow, state FROM sessions WHERE id = $1", [fork.sessionId]);
    expect(row.rows[0]).toEqual({ parent_id: sessionId, fork_version: atCall, workflow: "conversation", state: "open" });
  });

  it("a fork mid-vote sets the round's deadline again; a fork before the agents are known or past the end is refused", async () => {
    const { sessionId } = await startConversation(
      deps(),
      { projectId: "slowvote", mode: "voting", modeConfig: { quorum: 1, timeoutMs: 1000 }, message: "a or b?" },
      testActor,
    );
    const { events: before } = await conversationOf(db.store, sessionId);
    const posted = before.find((e) => e.type === "MessagePosted")!;
    // The post and what it decided were recorded together: the fork goes after all of it.
    const inside = await rejection(forkAnySession(deps(), { sessionId, atVersion: posted.version + 4, reason: "manual" }, testActor));
    const decided = before.filter((e) => e.txId === posted.txId).map((e) => e.version);
    expect(inside.message).toBe(
      `event ${posted.version + 4} is inside one decision (events ${posted.version}..${Math.max(...decided)} were recorded together): fork at ${posted.version - 1} or ${Math.max(...decided)}`,
    );
    const fork = await forkAnySession(deps(), { sessionId, atVersion: Math.max(...decided), reason: "manual" }, testActor);
    const child = await waitForConversation(
      db.store,
      fork.sessionId,
      "the fork's tally",
      (c, ev) =>
        ofType(ev, "ModeTimedOut").length +
          ofType<{ note: { kind: string } }>(ev, "ModeNoted").filter((n) => n.note.kind === "tallied").length >
          0 && idle(c),
    );
    expect(child.events.filter((e) => e.version > Math.max(...decided)).map((e) => e.type)).toContain("ModeDeadlineSet");
    expectDecidedExactly(child.events);
    // The start (created, started, its agents) is one decision too.
    expect((await rejection(forkAnySession(deps(), { sessionId, atVersion: 1, reason: "manual" }, testActor))).message).toBe(
      "event 1 is inside one decision (events 1..3 were recorded together): fork at 3",
    );
    expect((await rejection(forkAnySession(deps(), { sessionId, atVersion: 10_000, reason: "manual" }, testActor))).code).toBe(
      "INVALID_INPUT",
    );
  });
});

describe("export", () => {
  it("a conversation's export holds its transcript (conversation.md) and its conversation events (conversation.jsonl)", async () => {
    const { sessionId } = await startConversation(deps(), { projectId: "chat", mode: "voting", message: "Which database?" }, testActor);
    const { events } = await waitForConversation(db.store, sessionId, "the tally", (_c, ev) =>
      ofType<{ note: { kind: string } }>(ev, "ModeNoted").some((n) => n.note.kind === "tallied"),
    );
    const files = await exportSession(db.store, db.pool, sessionId, { audience: "viewer" });
    const md = String(files.get("conversation.md"));
    expect(md).toMatch(/^# Which database\?\n/);
    expect(md).toContain("**user:tester**");
    expect(md).toMatch(/\*vote 1: postgres wins \(the most weight \(2\)\); postgres 2, sqlite 1\*/);
    const lines = String(files.get("conversation.jsonl"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines.map((l) => l.type)).toEqual(events.filter((e) => isConversationEvent(e)).map((e) => e.type));
    expect(files.has("summary.json")).toBe(true);
    // A viewer's export names the agents, not how they run or where the repository is.
    const setup = events.find((e) => e.type === "ConversationSetup")!;
    const shown = viewerEventData(setup.type, setup.data) as {
      project: { repoPath: string };
      runtimes: Record<string, { config: object }>;
    };
    expect(shown.project.repoPath).toBe(HIDDEN_FOR_VIEWERS);
    expect(shown.runtimes.ada).toEqual({ role: "coder", config: { id: "ada", kind: "scripted" } });
  });
});
