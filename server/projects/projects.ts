// Projects: a git repository, its command allowlist and the agents per role. Stored as
// configuration (not events); a task copies what it uses into its TaskStarted event.
// This module owns the `projects` table: every read and write of it goes through here.
import { z } from "zod";
import { ZAgentConfig } from "../agents/config";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";
import { ZAllowlist } from "../commands/allowlist";
import { ZSettingsOverride, type SettingsOverride } from "../config/schemas";

/** Where to POST when one of the project's sessions needs a person. */
export const ZWebhook = z.object({
  url: z
    .string()
    .max(2000)
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "a webhook URL must start with http:// or https://"),
  /** `slack`: a Slack-compatible body (`{text}`); `json`: the event as JSON. */
  format: z.enum(["json", "slack"]).default("json"),
});
export type Webhook = z.output<typeof ZWebhook>;

export const ZProjectInput = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and '-'"),
  name: z.string().min(1).max(200),
  repoPath: z.string().min(1),
  allowlist: ZAllowlist,
  agents: z.partialRecord(z.enum(["coder", "reviewer", "tester", "planner", "executor"]), ZAgentConfig),
  maxIterations: z.number().int().min(1).max(20).default(3),
  /** This project's overrides of settings.json (step timeout, retry policy, rate limit). */
  settings: ZSettingsOverride.default({}),
  webhook: ZWebhook.nullable().default(null),
});
export type TProjectInput = z.input<typeof ZProjectInput>;

export interface Project {
  id: string;
  name: string;
  repoPath: string;
  allowlist: string[][];
  agents: Record<string, unknown>;
  maxIterations: number;
  settings: SettingsOverride;
  webhook: Webhook | null;
}

export async function upsertProject(db: Queryable, input: TProjectInput): Promise<Project> {
  const p = ZProjectInput.parse(input);
  await db.query(
    `INSERT INTO projects (id, name, repo_path, allowlist, agents, max_iterations, settings, webhook) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET name = $2, repo_path = $3, allowlist = $4, agents = $5, max_iterations = $6, settings = $7,
                                    webhook = $8, updated_at = now()`,
    [
      p.id,
      p.name,
      p.repoPath,
      JSON.stringify(p.allowlist),
      JSON.stringify(input.agents),
      p.maxIterations,
      JSON.stringify(p.settings),
      p.webhook ? JSON.stringify(p.webhook) : null,
    ],
  );
  return {
    id: p.id,
    name: p.name,
    repoPath: p.repoPath,
    allowlist: p.allowlist,
    agents: input.agents as Record<string, unknown>,
    maxIterations: p.maxIterations,
    settings: p.settings,
    webhook: p.webhook,
  };
}

interface ProjectRow {
  id: string;
  name: string;
  repo_path: string;
  allowlist: string[][];
  agents: Record<string, unknown> | null;
  max_iterations: number;
  settings: SettingsOverride | null;
  webhook: Webhook | null;
}

const PROJECT_COLUMNS = "id, name, repo_path, allowlist, agents, max_iterations, settings, webhook";

function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    repoPath: row.repo_path,
    allowlist: row.allowlist,
    agents: row.agents ?? {},
    maxIterations: row.max_iterations,
    settings: row.settings ?? {},
    webhook: row.webhook ?? null,
  };
}

export async function getProject(db: Queryable, id: string): Promise<Project> {
  const r = await db.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM projects WHERE id = $1`, [id]);
  const row = r.rows[0];
  if (!row) throw new AppError("NOT_FOUND", `no project "${id}"`);
  return toProject(row);
}

export async function projectExists(db: Queryable, id: string): Promise<boolean> {
  return (await db.query("SELECT 1 FROM projects WHERE id = $1", [id])).rowCount === 1;
}

/** Every project with its whole record (repository, allowlist, agents), by id. */
export async function listProjectRecords(db: Queryable): Promise<Project[]> {
  const r = await db.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM projects ORDER BY id`);
  return r.rows.map(toProject);
}

/**
 * What anyone signed in may see of the projects: id and name, by name, and whether every
 * agent of its record is simulated (the scripted brain: canned replies, no model).
 */
export async function listProjects(db: Queryable): Promise<Array<Pick<Project, "id" | "name"> & { simulated: boolean }>> {
  const r = await db.query<{ id: string; name: string; simulated: boolean }>(
    `SELECT id, name,
            (jsonb_typeof(agents) = 'object' AND agents <> '{}'::jsonb
             AND NOT EXISTS (SELECT 1 FROM jsonb_each(agents) a WHERE a.value->>'kind' IS DISTINCT FROM 'scripted')) AS simulated
     FROM projects ORDER BY name`,
  );
  return r.rows;
}

/** The project's webhook now, for a delivery (null: no project, or no webhook). */
export async function projectWebhook(db: Queryable, id: string): Promise<Webhook | null> {
  const r = await db.query<{ webhook: Webhook | null }>("SELECT webhook FROM projects WHERE id = $1", [id]);
  return r.rows[0]?.webhook ?? null;
}

/** A webhook URL as it may be shown or recorded: its origin only (the path may hold a token). */
export function maskedUrl(url: string): string {
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed) return "(invalid URL)";
  return parsed.pathname === "/" && !parsed.search ? parsed.origin : `${parsed.origin}/…`;
}
