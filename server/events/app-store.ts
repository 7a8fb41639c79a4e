// The application's event store: the app registry plus every inline projection.
import type { Db } from "../db/pool";
import { sessionsProjection } from "../sessions/projection";
import { stepsProjection } from "../runner/steps-projection";
import { appRegistry } from "./catalog";
import { EventStore } from "./store";
import { timelineProjection } from "./timeline";

export const appProjections = [sessionsProjection, timelineProjection(appRegistry), stepsProjection];

export function createAppEventStore(pool: Db): EventStore {
  return new EventStore(pool, { registry: appRegistry, projections: appProjections });
}
