// The project's delivery settings in force (docs/delivery.md): settings.json, the server's and the
// project's overrides, read when they are needed. Also what the runners read of them at each
// build: the remote that is the home of the sessions' branches, and its token from the runner's
// own environment (never recorded, never handed to an agent).
import { runSettings } from "../config/run";
import type { DeliverySettings, Settings } from "../config/schemas";
import type { Db, Queryable } from "../db/pool";
import type { EventStore } from "../events/store";
import { serverOverride } from "../projects/config-edits";
import { getProject, type Project } from "../projects/projects";
import type { SessionRemote } from "../workspaces";

/** The project's delivery settings in force (settings.json, the server's and the project's overrides). */
export async function deliverySettings(
  db: Queryable,
  store: EventStore,
  projectId: string,
): Promise<{ project: Project; delivery: DeliverySettings; retry: Settings["retry"] }> {
  const project = await getProject(db, projectId);
  const { settings } = runSettings(project, { server: (await serverOverride(store, db)).override });
  return { project, delivery: settings.delivery, retry: settings.retry };
}

/**
 * The remote that is the home of `sessionId`'s branch (its project's `delivery.remote`), with
 * the token of `delivery.tokenEnv` as this runner's `env` holds it; null when the project has
 * no remote (its registered repository is then the home: docs/delivery.md).
 */
export async function sessionRemote(
  pool: Db,
  store: EventStore,
  sessionId: string,
  env: Record<string, string | undefined> = process.env,
): Promise<SessionRemote | null> {
  const { rows } = await pool.query<{ project_id: string }>("SELECT project_id FROM sessions WHERE id = $1", [sessionId]);
  const projectId = rows[0]?.project_id;
  if (!projectId) return null;
  const { delivery } = await deliverySettings(pool, store, projectId);
  if (!delivery.remote) return null;
  const token = delivery.tokenEnv ? env[delivery.tokenEnv] : undefined;
  return { remote: delivery.remote, ...(token ? { token } : {}) };
}
