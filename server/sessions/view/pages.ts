// Which of a session's events its page shows: the latest ones at first paint, and earlier
// pages only when the reader asks for them (`live.older`), so a 10,000-event session opens
// as fast as a short one. A page counts the facts it holds, not the streamed chunks of an
// agent's output: a finished step's chunks repeat what its AgentOutputRecorded holds in
// full, so they are left out; the running step's stay (its live output is drawn from them).
import type { RecordedEvent } from "../../events/types";

/** Entries per "Load older" (and `live.session`'s default). */
export const PAGE_ENTRY_LIMIT = 100;

/**
 * Entries the session page opens with: what a short session holds whole, so that a long
 * session's page costs what a short one's does to send, hydrate and draw (docs/scaling.md,
 * "Long sessions"); "Load older" brings the rest a page at a time.
 */
export const FIRST_PAGE_ENTRY_LIMIT = 40;

const STREAMED = "AgentOutputStreamed";

function streamedStepOf(event: RecordedEvent): string | null {
  if (event.type !== STREAMED) return null;
  const stepId = (event.data as { stepId?: unknown } | null)?.stepId;
  return typeof stepId === "string" ? stepId : "";
}

export interface EventPage {
  /** The events shown, in order. */
  shown: RecordedEvent[];
  /** Events before the page (none shown; `live.older` reads them). */
  earlier: number;
}

/**
 * The last page of `events` (in version order): back from the end until it holds `limit`
 * events that are not streamed chunks; of the chunks inside it, only `runningStepId`'s.
 */
export function lastPage(events: RecordedEvent[], limit: number, runningStepId: string | null = null): EventPage {
  let start = events.length;
  let counted = 0;
  while (start > 0 && counted < limit) {
    start--;
    if (events[start]!.type !== STREAMED) counted++;
  }
  const shown = events.slice(start).filter((e) => {
    const step = streamedStepOf(e);
    return step === null || (runningStepId !== null && step === runningStepId);
  });
  return { shown, earlier: start };
}
