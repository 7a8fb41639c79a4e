// The application's event store: the app registry plus every inline projection (the
// sessions list, the steps queue). It composes events/, sessions/ and runner/, so it sits
// above all three; none of them imports it (the runner's executors get the store passed in).
import type { Db } from "./db/pool";
import { appRegistry } from "./events/catalog";
import { EventStore } from "./events/store";
import { stepsProjection } from "./runner/steps-projection";
import { sessionsProjection } from "./sessions/projection";

export const appProjections = [sessionsProjection, stepsProjection];

export function createAppEventStore(pool: Db): EventStore {
  return new EventStore(pool, { registry: appRegistry, projections: appProjections });
}
