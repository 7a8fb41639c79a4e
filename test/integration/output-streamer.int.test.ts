// An agent's output streamed into its session while it arrives (server/runner/output-streamer.ts):
// the first output at once, then coalesced into one event per interval or per maxChars, in order, split at 65,536 characters
// but never inside a surrogate pair, with the server's secrets redacted; nothing lands once
// the attempt no longer holds its step, and a failed append never fails the step.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { logger } from "../../server/log";
import { claimNextStep, recordStepOutcome, scheduleStep } from "../../server/runner/dispatch";
import { OutputStreamer, type StreamTarget } from "../../server/runner/output-streamer";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy";

let db: TestDatabase;
const agent = { kind: "agent", id: "coder" } as const;
const SECRET = "nextauth-secret-for-streaming-tests";
let savedSecret: string | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  savedSecret = process.env.NEXTAUTH_SECRET;
  process.env.NEXTAUTH_SECRET = SECRET;
});
afterAll(() => {
  if (savedSecret === undefined) delete process.env.NEXTAUTH_SECRET;
  else process.env.NEXTAUTH_SECRET = savedSecret;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A claimed agent step of a new session: attempt 1 holds it. */
async function heldStep(): Promise<StreamTarget> {
  const sessionId = uniqueId();
  await db.store.append(sessionId, "no_stream", [{ type: "SessionCreated", data: { title: "stream", workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  const stepId = await scheduleStep(db.store, { sessionId, kind: "streaming", input: {} }, { actor: testActor });
  expect(await claimNextStep(db.store, { runnerId: "streamer", leaseMs: 60_000, reclaimBackoffMs: 0 })).toMatchObject({ id: stepId });
  return { sessionId, stepId, attempt: 1, role: "coder" };
}

interface Streamed {
  seq: number;
  text: string;
  role: string;
  attempt: number;
}

async function streamed(target: StreamTarget): Promise<Streamed[]> {
  return (await db.store.readStream(target.sessionId)).filter((e) => e.type === "AgentOutputStreamed").map((e) => e.data as Streamed);
}

describe("OutputStreamer", () => {
  it("appends the first output at once, coalesces what follows within the interval into one event, and starts afresh after a quiet interval", async () => {
    const target = await heldStep();
    const streamer = new OutputStreamer(db.store, target, agent, { maxChars: 1_000, intervalMs: 1_000 });
    const texts = async () => (await streamed(target)).map((e) => e.text);
    // The first line is what a person waits for: it is not held for the interval.
    streamer.push("Reading ");
    await vi.waitFor(async () => expect(await texts()).toEqual(["Reading "]), { timeout: 900, interval: 20 });
    streamer.push("the ");
    streamer.push("tests");
    expect(await texts()).toEqual(["Reading "]);
    await vi.waitFor(async () => expect(await texts()).toEqual(["Reading ", "the tests"]), { timeout: 3_000, interval: 50 });
    // Quiet for an interval: the next output goes at once again.
    await sleep(1_100);
    streamer.push("...done");
    await vi.waitFor(async () => expect(await texts()).toEqual(["Reading ", "the tests", "...done"]), { timeout: 900, interval: 20 });
    await streamer.flush();
    expect(await streamed(target)).toEqual([
      { stepId: target.stepId, attempt: 1, role: "coder", seq: 0, text: "Reading " },
      { stepId: target.stepId, attempt: 1, role: "coder", seq: 1, text: "the tests" },
      { stepId: target.stepId, attempt: 1, role: "coder", seq: 2, text: "...done" },
    ]);
  });

  it("appends at once when maxChars is reached, without waiting for the interval", async () => {
    const target = await heldStep();
    const streamer = new OutputStreamer(db.store, target, agent, { maxChars: 10, intervalMs: 60_000 });
    streamer.push("0123456789");
    await sleep(300);
    expect((await streamed(target)).map((e) => e.text)).toEqual(["0123456789"]);
    streamer.push("abc");
    await sleep(300);
    expect((await streamed(target)).map((e) => e.text)).toEqual(["0123456789"]);
    await streamer.flush();
    expect((await streamed(target)).map((e) => e.text)).toEqual(["0123456789", "abc"]);
  });

  it("splits a long output into 65,536-character events in order, never between the halves of a surrogate pair", async () => {
    const target = await heldStep();
    const streamer = new OutputStreamer(db.store, target, agent, { maxChars: 1_000_000, intervalMs: 60_000 });
    // An emoji (two UTF-16 units) straddles the first 65,536-unit boundary.
    const text = `${"a".repeat(65_535)}😺${"b".repeat(70_000)}`;
    streamer.push(text);
    await streamer.flush();
    const events = await streamed(target);
    expect(events.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(events.map((e) => e.text.length)).toEqual([65_535, 65_536, 4_466]);
    expect(events[1]!.text.startsWith("😺")).toBe(true);
    expect(events.map((e) => e.text).join("")).toBe(text);
    expect(events.some((e) => e.text.includes("\uFFFD"))).toBe(false);
  });

  it("redacts the server's secrets from what it records", async () => {
    const target = await heldStep();
    const streamer = new OutputStreamer(db.store, target, agent, { maxChars: 1_000, intervalMs: 60_000 });
    streamer.push(`env says NEXTAUTH_SECRET=${SECRET} ok`);
    await streamer.flush();
    const [event] = await streamed(target);
    expect(event!.text).not.toContain(SECRET);
    expect(event!.text).toBe("env says NEXTAUTH_SECRET=[redacted NEXTAUTH_SECRET] ok");
  });

  it("records nothing once the attempt no longer holds its step, and the step's end is not disturbed", async () => {
    const target = await heldStep();
    const streamer = new OutputStreamer(db.store, target, agent, { maxChars: 1_000, intervalMs: 60_000 });
    streamer.push("before the end");
    await streamer.flush();
    await recordStepOutcome(
      db.store,
      { id: target.stepId, attempt: 1, sessionId: target.sessionId },
      { kind: "completed", output: {} },
      {
        kind: "runner",
        id: "streamer",
      },
    );
    streamer.push("after the end");
    await streamer.flush();
    expect((await streamed(target)).map((e) => e.text)).toEqual(["before the end"]);
    expect((await db.store.readStream(target.sessionId)).at(-1)?.type).toBe("StepCompleted");
  });

  describe("with the database away", () => {
    let proxy: TcpProxy;
    let pool: pg.Pool;
    beforeAll(async () => {
      proxy = await startTcpProxy(Number(new URL(db.url).port));
      pool = createPool(proxy.url(db.url), 2);
    });
    afterAll(async () => {
      await pool.end();
      await proxy.close();
    });

    it("a chunk that cannot be appended is dropped (streaming is only a view) with a warning, and the next one is recorded", async () => {
      const target = await heldStep();
      const streamer = new OutputStreamer(createAppEventStore(pool), target, agent, { maxChars: 1_000, intervalMs: 60_000 });
      const warn = vi.spyOn(logger, "warn").mockImplementation(() => {});
      proxy.cut();
      streamer.push("lost");
      try {
        await expect(streamer.flush()).resolves.toBeUndefined();
        expect(warn.mock.calls).toEqual([
          [{ err: expect.stringMatching(/\S/), stepId: target.stepId }, "could not record streamed output"],
        ]);
      } finally {
        warn.mockRestore();
      }
      proxy.restore();
      streamer.push("kept");
      await streamer.flush();
      expect(await streamed(target)).toEqual([{ stepId: target.stepId, attempt: 1, role: "coder", seq: 1, text: "kept" }]);
    });
  });
});
