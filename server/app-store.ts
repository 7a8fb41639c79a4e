// The application's event store: the app registry plus every inline projection (the
// sessions list, the steps queue, agent usage). It composes events/, sessions/, runner/ and usage/, so it sits
// above them all; none of them imports it (the runner's executors get the store passed in).
import type { Db } from "./db/pool";
import { appRegistry } from "./events/catalog";
import { EventStore } from "./events/store";
import { stepsProjection } from "./runner/steps-projection";
import { sessionsProjection } from "./sessions/projection";
import { usageProjection } from "./usage/projection";

/** In this order: a usage row reads the session row (its project), which the sessions projection writes. */
export const appProjections = [sessionsProjection, stepsProjection, usageProjection];

export function createAppEventStore(pool: Db): EventStore {
  return new EventStore(pool, { registry: appRegistry, projections: appProjections });
}
