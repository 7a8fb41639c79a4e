// A session's rounds, the one model the replay panel (./replay.ts) and the export
// (server/export/) both use. A round is one iteration of the workflow loop exactly as the
// engine counts it: the history is folded through the engine's own `evolve`, and each
// event belongs to the iteration current after it (1 for everything before the first
// IterationStarted: the start and the proposal roundtable). Round n > 1 begins with its
// IterationStarted event and carries its reason; round 1's reason is "initial", or "rerun"
// when a rerun restarted the loop in it (a rerun forks at TaskStarted, inside round 1, and
// its round 1 continues the inherited start). Rounds are keyed by their number: a loop
// restarted later would add to the round of that number, never make a second one.
import type { AppEvent } from "../events/catalog";
import type { FoldEvent, RecordedEvent } from "../events/types";
import { evolve, initialTaskState, startedTask, type TaskState } from "../task-engine";

/** A recorded event of the application's catalog (its `data` typed by its `type`). */
export type SessionEvent = RecordedEvent & AppEvent;
/** As a replay's lean read gives it (server/events/fold-read.ts): version, type, data and time only. */
export type FoldSessionEvent = FoldEvent & AppEvent;

export interface PlacedEvent<E extends FoldSessionEvent = SessionEvent> {
  event: E;
  /** The iteration the event belongs to (1 for everything before the first IterationStarted). */
  round: number;
  /** The workflow state after the event. */
  state: string;
}

export interface RoundSlice<E extends FoldSessionEvent = SessionEvent> {
  round: number;
  /** Why the round started: the IterationStarted reason; "initial" or "rerun" for round 1. */
  reason: string;
  /** The version of the round's first event. */
  fromVersion: number;
  events: E[];
}

export const INITIAL_ROUND_REASON = "initial";

/** Each event with its round and the workflow state after it; `final` is the folded state. */
export function placeEvents<E extends FoldEvent = RecordedEvent>(
  events: readonly E[],
): { placed: PlacedEvent<E & AppEvent>[]; final: TaskState } {
  let state: TaskState = initialTaskState;
  const placed = (events as readonly (E & AppEvent)[]).map((event) => {
    state = evolve(state, event);
    return { event, round: Math.max(1, startedTask(state)?.iteration ?? 0), state: state.fsm };
  });
  return { placed, final: state };
}

/** The placed events as rounds, in round order. */
export function groupRounds<E extends FoldSessionEvent>(placed: readonly PlacedEvent<E>[]): RoundSlice<E>[] {
  const rounds = new Map<number, RoundSlice<E>>();
  for (const { event, round } of placed) {
    let slice = rounds.get(round);
    if (!slice) {
      slice = { round, reason: INITIAL_ROUND_REASON, fromVersion: event.version, events: [] };
      rounds.set(round, slice);
    }
    if (event.type === "IterationStarted" && event.data.iteration === round) slice.reason = event.data.reason;
    if (event.type === "SessionForked" && event.data.reason === "rerun") slice.reason = "rerun";
    slice.events.push(event);
  }
  return [...rounds.values()].sort((a, b) => a.round - b.round);
}

/** A history as rounds, with the placed events and the folded state they came from. */
export function splitRounds<E extends FoldEvent = RecordedEvent>(
  events: readonly E[],
): { rounds: RoundSlice<E & AppEvent>[]; placed: PlacedEvent<E & AppEvent>[]; final: TaskState } {
  const { placed, final } = placeEvents(events);
  return { rounds: groupRounds(placed), placed, final };
}
