// Streams an agent's output into the session's events while it arrives, coalesced (at
// most one event per interval or per few KiB) so live views see progress without an
// event per token. The first output after a quiet interval is appended at once: what a
// person waits for after Confirm is the coder's first line (docs/scaling.md, "First output
// and live paint"), and holding it for the interval would add the whole interval to that
// wait. The complete output is still recorded once, in AgentOutputRecorded.
import { performance } from "node:perf_hooks";
import type { AgentRole } from "../agents/types";
import type { Actor } from "../events/catalog";
import type { EventStore } from "../events/store";
import { logger } from "../log";
import { recordableOutput } from "../process/env";
import { appendWhileHeld } from "./dispatch";

export interface StreamTarget {
  sessionId: string;
  stepId: string;
  attempt: number;
  role: AgentRole;
}

export class OutputStreamer {
  private buffer = "";
  private seq = 0;
  private timer: NodeJS.Timeout | null = null;
  private pending: Promise<void> = Promise.resolve();
  /** When the last append was started (monotonic ms); -Infinity before the first. */
  private lastFlushAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: EventStore,
    private readonly target: StreamTarget,
    private readonly actor: Actor,
    private readonly options: { maxChars: number; intervalMs: number } = { maxChars: 8_000, intervalMs: 500 },
  ) {}

  readonly push = (text: string): void => {
    this.buffer += text;
    if (this.timer) {
      if (this.buffer.length >= this.options.maxChars) void this.flush();
      return;
    }
    // Leading edge: nothing appended within the interval, so this goes at once; what
    // follows within the interval waits for the timer and goes as one event.
    const quietFor = performance.now() - this.lastFlushAt;
    if (quietFor >= this.options.intervalMs || this.buffer.length >= this.options.maxChars) void this.flush();
    else this.timer = setTimeout(() => void this.flush(), this.options.intervalMs - quietFor);
  };

  /** Appends what is buffered; appends are chained so their order is the output's order. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer.length > 0) this.lastFlushAt = performance.now();
    while (this.buffer.length > 0) {
      // Never between the two halves of a surrogate pair (an emoji would become two U+FFFD).
      const cut = 65_536 - (/[\uD800-\uDBFF]/.test(this.buffer.charAt(65_535)) ? 1 : 0);
      const chunk = this.buffer.slice(0, cut);
      this.buffer = this.buffer.slice(chunk.length);
      // The server's secrets never reach the record, whatever the agent could read.
      const { text } = recordableOutput(chunk);
      const data = { stepId: this.target.stepId, attempt: this.target.attempt, role: this.target.role, seq: this.seq++, text };
      this.pending = this.pending
        .then(() =>
          appendWhileHeld(
            this.store,
            { id: this.target.stepId, attempt: this.target.attempt, sessionId: this.target.sessionId },
            [{ type: "AgentOutputStreamed", data }],
            { actor: this.actor },
          ),
        )
        .then(
          () => undefined,
          // Streaming is a view of progress: losing a chunk must not fail the step.
          (err: unknown) => logger.warn({ err: String(err), stepId: this.target.stepId }, "could not record streamed output"),
        );
    }
    return this.pending;
  }
}
