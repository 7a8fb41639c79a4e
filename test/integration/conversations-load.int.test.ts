// 100 concurrent conversations × 20 turns through two real runner processes (req C8): a
// quarter in each mode, one runner killed (SIGKILL) halfway and replaced. Each conversation's
// events must be exactly what its mode decided (its commands replayed through the decider),
// every call answered exactly once, and no conversation's call, step or reply in another's.
import type { ChildProcess } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { postMessage, startConversation } from "../../server/conversations/service";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { spawnRunnerProcess } from "../helpers/runner-process";
import { createHarness, ofType, type Harness } from "../helpers/tasks";
import { chatAgent, expectDecidedExactly } from "../helpers/conversations";

let db: TestDatabase;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  const ballot = (choice: string) => JSON.stringify({ choice, rationale: "r", confidence: 0.5 });
  await h.project("load", {
    coder: chatAgent("ada", { reply: ["noted"], ballot: [ballot("a")], sop: ["done"] }, ["sql"]),
    reviewer: chatAgent("bo", { reply: ["agreed"], ballot: [ballot("b")], sop: ["done"] }, ["css"]),
  });
});

const CONVERSATIONS = 100;
const TURNS = 20;
const MODES = [
  { mode: "free_discussion", message: (t: number) => `@ada turn ${t}`, repliesPerTurn: 1 },
  { mode: "expert_routing", message: (t: number) => `a question about sql, turn ${t}`, repliesPerTurn: 1 },
  { mode: "voting", modeConfig: { timeoutMs: 600_000 }, message: (t: number) => `a or b, turn ${t}?`, repliesPerTurn: 2 },
  {
    mode: "sop",
    modeConfig: { steps: [{ id: "answer", agent: "bo", instruction: "Answer." }] },
    message: (t: number) => `turn ${t}`,
    repliesPerTurn: 1,
  },
] as const;

async function callsOpen(): Promise<number> {
  const r = await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM steps WHERE kind = 'conversation_call' AND state IN ('pending', 'running')",
  );
  return r.rows[0]!.n;
}

async function settled(timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await callsOpen()) > 0) {
    if (Date.now() > deadline) throw new Error(`${await callsOpen()} calls still open`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("100 conversations × 20 turns on two runner processes", () => {
  it("each conversation's events are exactly what its mode decided; a runner killed halfway loses nothing", async () => {
    const runner = (id: string): ChildProcess =>
      spawnRunnerProcess({ databaseUrl: db.url, id, stateDir: h.stateDir, workspacesRoot: h.workspacesRoot, leaseMs: 1000 });
    const doomed = runner("load-a");
    runner("load-b");
    const deps = { store: db.store, pool: db.pool };
    const conversations = await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, i) => {
        const spec = MODES[i % MODES.length]!;
        const { sessionId } = await startConversation(
          deps,
          { projectId: "load", mode: spec.mode, ...("modeConfig" in spec ? { modeConfig: spec.modeConfig } : {}) },
          testActor,
        );
        return { sessionId, spec };
      }),
    );
    for (let turn = 1; turn <= TURNS; turn++) {
      await Promise.all(conversations.map((c) => postMessage(deps, { sessionId: c.sessionId, text: c.spec.message(turn) }, testActor)));
      if (turn === TURNS / 2) {
        // Killed with its calls in flight: their leases expire and the other runners take them over.
        doomed.kill("SIGKILL");
        runner("load-c");
      }
      await settled();
    }

    const reclaimed = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM steps WHERE kind = 'conversation_call' AND attempt > 1",
    );
    const runners = await db.pool.query<{ runner: string }>(
      `SELECT DISTINCT data->>'runnerId' AS runner FROM events WHERE type = 'StepStarted' ORDER BY 1`,
    );
    expect(runners.rows.map((r) => r.runner)).toEqual(expect.arrayContaining(["load-b", "load-c"]));
    for (const { sessionId, spec } of conversations) {
      const events = await db.store.readStream(sessionId);
      expectDecidedExactly(events);
      const calls = ofType<{ callId: string }>(events, "AgentCallScheduled").map((c) => c.callId);
      const replies = ofType<{ callId: string }>(events, "AgentReplied").map((r) => r.callId);
      expect(replies, `${sessionId} (${spec.mode})`).toHaveLength(TURNS * spec.repliesPerTurn);
      // Every call answered exactly once, and only its own calls: each a step of this conversation.
      expect([...replies].sort()).toEqual([...calls].sort());
      expect(ofType(events, "ReplyDiscarded")).toEqual([]);
      const steps = await db.pool.query<{ id: string }>(
        "SELECT id FROM steps WHERE session_id = $1 AND kind = 'conversation_call' AND state = 'completed' ORDER BY id",
        [sessionId],
      );
      expect(steps.rows.map((s) => s.id)).toEqual([...calls].sort());
      expect(ofType(events, "MessagePosted")).toHaveLength(TURNS);
      if (spec.mode === "voting") {
        const tallies = ofType<{ note: { kind: string; round: number } }>(events, "ModeNoted").filter((n) => n.note.kind === "tallied");
        expect(tallies.map((t) => t.note.round)).toEqual(Array.from({ length: TURNS }, (_, i) => i + 1));
      }
    }
    // How many calls the killed runner left to the others (reported, not a condition: the kill
    // may land between turns' calls on a fast machine).
    console.info(`conversations-load: ${reclaimed.rows[0]!.n} call(s) taken over after the kill`);
  }, 600_000);
});
