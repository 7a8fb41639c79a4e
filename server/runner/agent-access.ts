// What the runner lets a step's agent take and reach, read when the step runs (not when the
// task started): settings.json of this runner's data directory, the server's overrides and the
// session's project's, as they are now — so an admin who takes a variable or a host off a
// list stops it at the next step of every session, forks and reruns of old sessions
// included (docs/security.md).
import { agentEnvPolicy, assertAgentAccess } from "../agents/access";
import type { AgentConfig } from "../agents/config";
import { AgentError } from "../agents/types";
import { ZSettingsOverride, withOverride, type AccessSettings } from "../config/schemas";
import { defaultSettingsPath, loadSettings } from "../config/settings";
import type { Db } from "../db/pool";
import { EventStore } from "../events/store";
import type { AgentEnvPolicy } from "../process/env";
import { serverOverride } from "../config/overrides";
import { StepExecutionError } from "./executors";

export interface AgentAccess {
  env: AgentEnvPolicy;
  /** Host rules the agent may reach besides its provider's and its MCP servers' (settings access.agentHosts). */
  hosts: AccessSettings["agentHosts"];
  /** Hosts on non-public addresses an HTTP brain the runner calls for it may reach (settings access.privateHosts). */
  privateHosts: AccessSettings["privateHosts"];
}

/** The rules in force now for the agents of `sessionId`'s project. */
export async function currentAgentAccess(pool: Db, sessionId: string): Promise<AgentAccess> {
  const { rows } = await pool.query<{ settings: unknown }>(
    "SELECT p.settings FROM sessions s JOIN projects p ON p.id = s.project_id WHERE s.id = $1",
    [sessionId],
  );
  const project = ZSettingsOverride.safeParse(rows[0]?.settings ?? {});
  const { override } = await serverOverride(new EventStore(pool));
  const file = loadSettings(defaultSettingsPath());
  const settings = withOverride(withOverride(file.settings, override), project.success ? project.data : undefined);
  return { env: agentEnvPolicy(settings), hosts: settings.access.agentHosts, privateHosts: settings.access.privateHosts };
}

/** `config`'s access as the rules say now; a variable they refuse fails the step, not retryable, naming the rule. */
export async function checkedAgentAccess(pool: Db, sessionId: string, config: AgentConfig): Promise<AgentAccess> {
  const access = await currentAgentAccess(pool, sessionId);
  try {
    assertAgentAccess(config, access.env);
  } catch (err) {
    if (err instanceof AgentError) throw new StepExecutionError(err.errorClass, err.message, false);
    throw err;
  }
  return access;
}
