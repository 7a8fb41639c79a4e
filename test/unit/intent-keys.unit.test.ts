// The dashboard's idempotency keys (lib/trpc/intent-keys.ts): one per mutation and input while
// it is under way and for a while after its answer; a new one after that, or for other input.
import { describe, expect, it } from "vitest";
import { IntentKeys, newIntentKey } from "../../lib/trpc/intent-keys";

describe("intent keys", () => {
  it("a repeat while the first is under way, or within the window after its answer, gets the same key", () => {
    let now = 1_000;
    const keys = new IntentKeys(10_000, () => now);
    const first = keys.take("tasks.start", { prompt: "x" });
    const again = keys.take("tasks.start", { prompt: "x" });
    expect(again.key).toBe(first.key);
    first.settle();
    again.settle();
    now += 9_000;
    expect(keys.take("tasks.start", { prompt: "x" }).key).toBe(first.key);
  });

  it("another input or another mutation is another intent; the same input past the window is a new one", () => {
    let now = 0;
    const keys = new IntentKeys(10_000, () => now);
    const first = keys.take("conversations.post", { text: "ok" });
    expect(keys.take("conversations.post", { text: "ok!" }).key).not.toBe(first.key);
    expect(keys.take("tasks.start", { text: "ok" }).key).not.toBe(first.key);
    first.settle();
    first.settle(); // settling twice counts once
    now += 10_001;
    expect(keys.take("conversations.post", { text: "ok" }).key).not.toBe(first.key);
  });

  it("the window starts when the last call under the key is answered", () => {
    let now = 0;
    const keys = new IntentKeys(10_000, () => now);
    const a = keys.take("forge.pass", { sessionId: "s" });
    const b = keys.take("forge.pass", { sessionId: "s" });
    a.settle();
    now += 20_000; // b still under way: the intent is kept
    expect(keys.take("forge.pass", { sessionId: "s" }).key).toBe(a.key);
    b.settle();
  });

  it("keys are version 4 UUIDs, each different", () => {
    const made = new Set(Array.from({ length: 1000 }, newIntentKey));
    expect(made.size).toBe(1000);
    for (const k of made) expect(k).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
