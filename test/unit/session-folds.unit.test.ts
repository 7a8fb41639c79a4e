// The session page's delivery and clean-up panels read only the event types their folds name
// (DELIVERY_EVENT_TYPES, APPROVAL_EVENT_TYPES, PRUNE_STATUS_TYPES; `readStream`'s `types`): from those types, each
// fold gives what it gives from the whole session, and each listed type is one it needs.
import { describe, expect, it } from "vitest";
import { APPROVAL_EVENT_TYPES, approvalsOf, DELIVERY_EVENT_TYPES, deliveriesOf } from "../../server/delivery/service";
import type { RecordedEvent } from "../../server/events/types";
import { PRUNE_STATUS_TYPES, pruneStatusOf } from "../../server/pruning/service";

const SESSION = "s-1";

const event = (version: number, type: string, data: unknown, streamId = SESSION): RecordedEvent => ({
  position: version,
  txId: 1,
  eventId: `e${version}`,
  streamId,
  version,
  type,
  data,
  metadata: { actor: { kind: "user", id: "u1" }, correlationId: "c", causationId: null, schemaVersion: 1 },
  recordedAt: `2026-11-26T00:00:${String(version).padStart(2, "0")}.000Z`,
});

/**
 * A session (a fork: one start inherited, one of its own) approved for delivery, with two deliveries (one
 * failed, one done), a clean-up asked, failed, resumed and asked again, among other events.
 */
function session(): RecordedEvent[] {
  const steps: Array<[string, unknown, string?]> = [
    ["TaskStarted", { workflow: "review_loop", project: { id: "p0", name: "P" } }, "parent"],
    ["WorkspacePruneRequested", { stepId: "parent-p" }, "parent"],
    ["SessionStateChanged", { from: "a", to: "b" }],
    ["TaskStarted", { workflow: "review_loop", project: { id: "p1", name: "P" } }],
    ["DeliveryApproved", {}],
    ["DeliveryRequested", { stepId: "d1", mode: "push", branch: "b" }],
    ["AgentOutputStreamed", { stepId: "x", seq: 0, text: "hi" }],
    ["DeliveryFailed", { stepId: "d1", errorClass: "network", message: "refused" }],
    ["WorkspacePruneRequested", { stepId: "p1" }],
    ["WorkspacePruneFailed", { stepId: "p1", message: "busy" }],
    ["SessionResumed", { by: "u1" }],
    ["DeliveryRequested", { stepId: "d2", mode: "push", branch: "b" }],
    ["StepStarted", { stepId: "d2" }],
    ["DeliveryCompleted", { stepId: "d2", mode: "push", branch: "b" }],
    ["WorkspacePruneRequested", { stepId: "p2" }],
    ["SessionPruned", { stepId: "p2" }],
    ["SessionStateChanged", { from: "b", to: "c" }],
  ];
  return steps.map(([type, data, stream], i) => event(i + 1, type, data, stream ?? SESSION));
}

const FOLDS = [
  { name: "deliveries", types: DELIVERY_EVENT_TYPES, fold: (events: RecordedEvent[]) => deliveriesOf(events) },
  { name: "delivery approvals", types: APPROVAL_EVENT_TYPES, fold: (events: RecordedEvent[]) => approvalsOf(events) },
  { name: "clean-up status", types: PRUNE_STATUS_TYPES, fold: (events: RecordedEvent[]) => pruneStatusOf(SESSION, events) },
];

/** The session as it stood after each of its events. */
const prefixes = (all: RecordedEvent[]) => all.map((_, i) => all.slice(0, i + 1));

describe.each(FOLDS)("the $name read from its types", ({ types, fold }) => {
  it("is the same as from the whole session, at every point of it", () => {
    const all = session();
    expect(all.filter((e) => types.includes(e.type)).length).toBeLessThan(all.length);
    for (const events of prefixes(all)) expect(fold(events.filter((e) => types.includes(e.type)))).toEqual(fold(events));
  });

  it("needs every type it lists", () => {
    for (const left of types) {
      const differs = prefixes(session()).some((events) => {
        const without = events.filter((e) => types.includes(e.type) && e.type !== left);
        return JSON.stringify(fold(without)) !== JSON.stringify(fold(events));
      });
      expect(differs, left).toBe(true);
    }
  });
});

describe("what the session above folds to", () => {
  it("two deliveries with their outcomes, the last clean-up done, and one approval on project p1", () => {
    expect(deliveriesOf(session()).map((d) => [d.stepId, d.outcome?.type ?? null])).toEqual([
      ["d1", "DeliveryFailed"],
      ["d2", "DeliveryCompleted"],
    ]);
    expect(pruneStatusOf(SESSION, session())).toMatchObject({ status: "pruned", stepId: "p2" });
    expect(approvalsOf(session())).toEqual({ projectId: "p1", approvedBy: ["user:u1"] });
    expect(approvalsOf(session().filter((e) => e.type !== "TaskStarted"))).toBeNull();
  });
});
