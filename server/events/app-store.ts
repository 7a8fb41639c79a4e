// The application's event store: the app registry plus every inline projection.
import type { Db } from "../db/pool";
import { sessionsProjection } from "../sessions/projection";
import { stepsProjection } from "../runner/steps-projection";
import { appRegistry } from "./catalog";
import { EventStore } from "./store";

export const appProjections = [sessionsProjection, stepsProjection];

export function createAppEventStore(pool: Db): EventStore {
  return new EventStore(pool, { registry: appRegistry, projections: appProjections });
}
