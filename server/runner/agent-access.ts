// What the runner lets a step's agent take and reach, read when the step runs (not when the
// task started): settings.json of this runner's data directory, the server's overrides and the
// session's project's, as they are now — so an admin who takes a variable or a host off a
// list stops it at the next step of every session, forks and reruns of old sessions
// included (docs/security.md).
//
// Read cheaply, as every agent step waits on it before its process starts (docs/scaling.md,
// "First output and live paint"): one query reads the project's settings and the version of
// the server's config stream together; the server's override is folded again only when that
// version changed, settings.json parsed again only when the file changed.
import fs from "node:fs";
import { agentEnvPolicy, assertAgentAccess } from "../agents/access";
import type { AgentConfig } from "../agents/config";
import { AgentError } from "../agents/types";
import { ZSettingsOverride, withOverride, type AccessSettings, type Settings, type SettingsOverride } from "../config/schemas";
import { defaultSettingsPath, loadSettings } from "../config/settings";
import type { Db } from "../db/pool";
import { EventStore } from "../events/store";
import type { AgentEnvPolicy } from "../process/env";
import { SERVER_CONFIG_STREAM, serverOverride } from "../config/overrides";
import { StepExecutionError } from "./executors";

export interface AgentAccess {
  env: AgentEnvPolicy;
  /** Host rules the agent may reach besides its provider's and its MCP servers' (settings access.agentHosts). */
  hosts: AccessSettings["agentHosts"];
  /** Hosts on non-public addresses an HTTP brain the runner calls for it may reach (settings access.privateHosts). */
  privateHosts: AccessSettings["privateHosts"];
}

/**
 * The project's settings and where the server's config stream stands (its version and its
 * creation: a stream is append-only, so the two name its events), in one round trip.
 */
const ACCESS_SQL = `SELECT (SELECT p.settings FROM sessions s JOIN projects p ON p.id = s.project_id WHERE s.id = $1) AS settings,
       (SELECT version::text || '@' || created_at::text FROM streams WHERE id = $2) AS server_at`;

/** The server's override folded, per database (its pool) and per state of its config stream. */
const serverOverrides = new WeakMap<Db, { at: string; override: SettingsOverride }>();

async function serverOverrideAt(pool: Db, at: string | null): Promise<SettingsOverride> {
  // No stream: no change was ever made (serverOverride's fold of nothing).
  if (at === null) return {};
  const known = serverOverrides.get(pool);
  if (known?.at === at) return known.override;
  // Folded now, so at least as new as `at`: a later change has another version, and is folded again.
  const { override } = await serverOverride(new EventStore(pool));
  serverOverrides.set(pool, { at, override });
  return override;
}

/**
 * A file changed this recently is read again every time: an edit in place within the clock's
 * granularity can leave its size and times as they were.
 */
const SETTLED_MS = 2000;
let settingsFile: { file: string; identity: string; settings: Settings } | null = null;

/** settings.json's settings (defaults when it is missing or invalid, as loadSettings gives them), parsed again when the file changed. */
function fileSettings(file: string): Settings {
  let stat: fs.Stats | null;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") return loadSettings(file).settings;
    stat = null;
  }
  const identity = stat ? `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}` : "absent";
  const settled = !stat || Date.now() - Math.max(stat.mtimeMs, stat.ctimeMs) > SETTLED_MS;
  if (settled && settingsFile?.file === file && settingsFile.identity === identity) return settingsFile.settings;
  const { settings } = loadSettings(file);
  settingsFile = { file, identity, settings };
  return settings;
}

/** The rules in force now for the agents of `sessionId`'s project. */
export async function currentAgentAccess(pool: Db, sessionId: string): Promise<AgentAccess> {
  const { rows } = await pool.query<{ settings: unknown; server_at: string | null }>({
    name: "catcafe_agent_access",
    text: ACCESS_SQL,
    values: [sessionId, SERVER_CONFIG_STREAM],
  });
  const project = ZSettingsOverride.safeParse(rows[0]?.settings ?? {});
  const override = await serverOverrideAt(pool, rows[0]?.server_at ?? null);
  const file = fileSettings(defaultSettingsPath());
  const settings = withOverride(withOverride(file, override), project.success ? project.data : undefined);
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
