// What an admin allows agents (settings access, docs/security.md), given in a test's database
// the way an admin gives it: a change of the server's settings, recorded as ConfigChanged.
import { configureServer } from "../../server/projects/config-edits";
import type { TestDatabase } from "./db";

const ADMIN = { kind: "user" as const, id: "test-admin" };

/** Sets the server's lists (they add to settings.json's): variables agents may receive, hosts they may reach, private hosts the server may call. */
export async function allowAgents(
  db: Pick<TestDatabase, "pool" | "store">,
  allow: { agentEnv?: string[]; agentHosts?: string[]; privateHosts?: string[] },
): Promise<void> {
  await configureServer({ pool: db.pool, store: db.store }, allow, ADMIN);
}
