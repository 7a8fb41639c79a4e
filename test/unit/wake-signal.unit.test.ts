// wakeSignal (server/sessions/view/follow.ts): the coalescing wake-up every live stream waits on
// (a session's view, the inbox, the header's count) between reads.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { wakeSignal } from "../../server/sessions/view/follow";

describe("wakeSignal", () => {
  it("makes the next wait return once for any number of wakes meanwhile", async () => {
    const w = wakeSignal();
    w.wake();
    w.wake();
    await w.wait(undefined);
    let woke = false;
    const waiting = w.wait(undefined).then(() => (woke = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(woke).toBe(false);
    w.wake();
    await waiting;
    expect(woke).toBe(true);
  });

  it("keeps no abort listener once woken, however often a stream waits, and returns at once when aborted", async () => {
    const w = wakeSignal();
    const controller = new AbortController();
    for (let i = 0; i < 50; i++) {
      const waiting = w.wait(controller.signal);
      w.wake();
      await waiting;
    }
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);

    const waiting = w.wait(controller.signal);
    controller.abort();
    await waiting;
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    await w.wait(controller.signal); // already aborted: no wait
  });
});
