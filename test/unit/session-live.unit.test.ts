// The session page's pure parts for long and live sessions: which events a page of the
// timeline holds (streamed chunks not counted, only the running step's kept), what a screen
// reader is told of new entries, when a waiting step says no runner is alive, and the names a
// live batch brings.
import { describe, expect, it } from "vitest";
import { asksForRunners, runnerDown, RUNNER_DOWN_AFTER_MS } from "../../components/session/runner-wait";
import { describeNewEntries } from "../../components/session/timeline-announcer";
import { mergeNames } from "../../components/session/use-live-session";
import { appRegistry } from "../../server/events/catalog";
import type { RecordedEvent } from "../../server/events/types";
import { toSessionEntry } from "../../server/sessions/view/entries";
import { lastPage } from "../../server/sessions/view/pages";

function events(specs: Array<[type: string, data: unknown]>): RecordedEvent[] {
  return specs.map(([type, data], i) => ({
    position: i + 1,
    txId: 1,
    eventId: `e-${i + 1}`,
    streamId: "s-1",
    version: i + 1,
    type,
    data,
    metadata: { actor: { kind: "user", id: "u-1" }, correlationId: "c", causationId: null, schemaVersion: 1 },
    recordedAt: "2026-01-01T00:00:00.000Z",
  }));
}
const message = (text: string): [string, unknown] => ["OperatorMessagePosted", { text }];
const chunk = (stepId: string): [string, unknown] => ["AgentOutputStreamed", { stepId, attempt: 1, role: "coder", seq: 0, text: "…" }];

describe("lastPage", () => {
  it("holds the latest `limit` events and counts the ones before it", () => {
    const page = lastPage(events([message("a"), message("b"), message("c"), message("d")]), 2);
    expect(page.shown.map((e) => e.version)).toEqual([3, 4]);
    expect(page.earlier).toBe(2);
    expect(lastPage(events([message("a")]), 5)).toMatchObject({ earlier: 0, shown: [{ version: 1 }] });
  });

  it("does not count streamed chunks, and keeps only the running step's", () => {
    const all = events([message("a"), message("b"), chunk("old"), chunk("old"), message("c"), chunk("now"), chunk("now")]);
    const page = lastPage(all, 2, "now");
    expect(page.shown.map((e) => e.version)).toEqual([2, 5, 6, 7]);
    expect(page.earlier).toBe(1);
    expect(lastPage(all, 2).shown.map((e) => e.version)).toEqual([2, 5]);
  });
});

describe("describeNewEntries", () => {
  const entries = events([
    message("first"),
    ["StepStarted", { stepId: "x", attempt: 1, runnerId: "r" }],
    message("second"),
    message("third"),
  ]).map((e) => toSessionEntry(e, (t, d) => appRegistry.summarize(t, d)));

  it("says nothing for entries already said or step bookkeeping", () => {
    expect(describeNewEntries(entries, 4)).toBeNull();
    expect(describeNewEntries(entries.slice(0, 2), 1)).toBeNull();
  });

  it("says the one new entry, or how many with the latest", () => {
    expect(describeNewEntries(entries, 3)).toBe(`New in the timeline: ${entries[3]!.summary}`);
    expect(describeNewEntries(entries, 1)).toBe(`2 new in the timeline; the latest: ${entries[3]!.summary}`);
  });
});

describe("runnerDown", () => {
  it("only once the step has waited long enough and no runner is live", () => {
    expect(runnerDown(RUNNER_DOWN_AFTER_MS, 0)).toBe(true);
    expect(runnerDown(RUNNER_DOWN_AFTER_MS - 1, 0)).toBe(false);
    expect(runnerDown(RUNNER_DOWN_AFTER_MS, 1)).toBe(false);
    expect(runnerDown(RUNNER_DOWN_AFTER_MS, null)).toBe(false);
    expect(runnerDown(null, 0)).toBe(false);
  });
});

describe("asksForRunners", () => {
  it("asks nothing while a step is new or not waiting, and asks before the hint could show", () => {
    expect(asksForRunners(null)).toBe(false);
    expect(asksForRunners(0)).toBe(false);
    expect(asksForRunners(1_000)).toBe(false);
    // Asked a poll ahead, so the count is known when the wait reaches RUNNER_DOWN_AFTER_MS.
    expect(asksForRunners(RUNNER_DOWN_AFTER_MS - 1)).toBe(true);
    expect(asksForRunners(RUNNER_DOWN_AFTER_MS)).toBe(true);
  });
});

describe("mergeNames", () => {
  const held = { "u-1": "Ada", "u-2": "Grace" };
  it("keeps the same object when a batch names no one new (the view's entries are not drawn again)", () => {
    expect(mergeNames(held, {})).toBe(held);
    expect(mergeNames(held, { "u-1": "Ada" })).toBe(held);
  });
  it("adds new names and takes changed ones, leaving the held object as it was", () => {
    const merged = mergeNames(held, { "u-3": "Edsger", "u-2": "Grace H." });
    expect(merged).toEqual({ "u-1": "Ada", "u-2": "Grace H.", "u-3": "Edsger" });
    expect(held).toEqual({ "u-1": "Ada", "u-2": "Grace" });
  });
});
