// Which hosts on non-public addresses a project's outbound calls may reach now
// (`access.privateHosts` in force: settings.json, the server's overrides, the project's;
// accessInForce in ./config-edits.ts). Runners read it at each webhook delivery, and for
// HTTP brains with the rest of the access rules when a step runs (server/runner/agent-access.ts),
// so an allowance given or withdrawn applies to the next call, whatever the session recorded
// when it started (docs/configuration.md, "Outbound calls").
import type { Queryable } from "../db/pool";
import type { EventStore } from "../events/store";
import { accessInForce } from "./config-edits";
import { getProject, projectWebhook, type Webhook } from "./projects";

/** `access.privateHosts` in force for a project now. */
export async function projectPrivateHosts(
  db: Queryable,
  store: EventStore,
  projectId: string,
  options: { settingsFile?: string } = {},
): Promise<string[]> {
  const project = await getProject(db, projectId);
  return (await accessInForce(store, project.settings, { ...options, db })).privateHosts;
}

/** The project's webhook now, with the private hosts its delivery may reach (null: no project, or no webhook). */
export async function webhookTarget(
  db: Queryable,
  store: EventStore,
  projectId: string,
): Promise<(Webhook & { privateHosts: string[] }) | null> {
  const hook = await projectWebhook(db, projectId);
  if (!hook) return null;
  return { ...hook, privateHosts: await projectPrivateHosts(db, store, projectId) };
}
