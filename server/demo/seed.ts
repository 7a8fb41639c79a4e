// Seeds the demo on start (req N1): the demo repository, the "demo" project with its
// simulated agents, and — only while the project has no session yet, so restarts do not
// pile up tasks — one task in proposal mode that ends waiting for the operator's confirm, a
// Forge pipeline waiting at its PRD gate, and one conversation per collaboration mode.
// CATCAFE_DEMO=0 turns it all off.
import { z } from "zod";
import { createPool } from "../db/pool";
import { parseEnv } from "../env";
import { createAppEventStore } from "../app-store";
import type { Actor } from "../events/catalog";
import { projectExists, upsertProject } from "../projects/projects";
import { startTask, type TaskDeps } from "../tasks/commands";
import { newForge } from "../tasks/forge";
import { startConversation } from "../conversations/service";
import { listConversations } from "../conversations/view";
import { DEMO_CONVERSATIONS } from "./conversation-content";
import { FORGE_DEMO_GATES, FORGE_DEMO_IDEA, FORGE_DEMO_TITLE } from "./forge-content";
import { DEMO_AGENTS, DEMO_ALLOWLIST, DEMO_PROJECT_ID, DEMO_PROJECT_NAME, DEMO_TASK_PROMPT, DEMO_TASK_TITLE } from "./content";
import { DEMO_DELIVERY_TARGET, ensureDemoRepo } from "./repo";

export const DEMO_ACTOR: Actor = { kind: "system", id: "demo" };

const SWITCH_VALUES = ["1", "0", "true", "false", "on", "off", "yes", "no"] as const;
export const ZDemoEnv = z.object({
  CATCAFE_DEMO: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(SWITCH_VALUES, { error: `must be one of ${SWITCH_VALUES.join(", ")}` }))
    .default("1")
    .transform((v) => ["1", "true", "on", "yes"].includes(v)),
});

/** Serializes seeding across processes sharing one database (two starts at once). */
const SEED_LOCK_SQL = "hashtext('catcafe.demo.seed')";

export interface SeedDemoOptions {
  /** The data directory; the demo repository goes to `<dataDir>/demo-project`. */
  dataDir: string;
  /** Where CATCAFE_DEMO is read from (default: process.env). */
  env?: Record<string, string | undefined>;
}

export type DemoSeedResult =
  | { status: "disabled"; message: string }
  | {
      status: "seeded";
      projectId: string;
      repoPath: string;
      /** The demo task: the one started now, or the project's first session from an earlier run. */
      sessionId: string;
      /** The Forge demo (a word counter, idea to delivery), waiting at the PRD's gate. */
      forgeSessionId: string;
      /** One conversation per collaboration mode (from the first run). */
      conversationIds: string[];
      created: { repo: boolean; project: boolean; task: boolean };
      message: string;
    };

/**
 * The first task session of a project (Forge sessions aside). TaskStarted opens a task's own stream (right after
 * SessionCreated); forks inherit theirs, so looking at the first versions is enough, and
 * the join walks the small sessions table rather than every event.
 */
async function firstSessionOf(deps: TaskDeps, projectId: string): Promise<string | null> {
  const r = await deps.pool.query<{ id: string }>(
    `SELECT s.id FROM sessions s
     JOIN events e ON e.stream_id = s.id AND e.version <= 5
     WHERE e.type = 'TaskStarted' AND e.data->'project'->>'id' = $1 AND e.data->>'workflow' <> 'forge'
     ORDER BY s.created_at, s.id LIMIT 1`,
    [projectId],
  );
  return r.rows[0]?.id ?? null;
}

/** The project's first Forge session, if it has one. */
async function firstForgeOf(deps: TaskDeps, projectId: string): Promise<string | null> {
  const r = await deps.pool.query<{ id: string }>(
    `SELECT s.id FROM sessions s
     JOIN events e ON e.stream_id = s.id AND e.version <= 5
     WHERE e.type = 'TaskStarted' AND e.data->'project'->>'id' = $1 AND e.data->>'workflow' = 'forge'
     ORDER BY s.created_at, s.id LIMIT 1`,
    [projectId],
  );
  return r.rows[0]?.id ?? null;
}

/** The Forge demo: a word counter from idea to delivery, stopping at the PRD's gate for a person. */
async function seedForge(deps: TaskDeps): Promise<{ sessionId: string; created: boolean }> {
  const earlier = await firstForgeOf(deps, DEMO_PROJECT_ID);
  if (earlier) return { sessionId: earlier, created: false };
  const { sessionId } = await newForge(
    deps,
    { projectId: DEMO_PROJECT_ID, idea: FORGE_DEMO_IDEA, title: FORGE_DEMO_TITLE, gates: [...FORGE_DEMO_GATES] as ["prd"] },
    DEMO_ACTOR,
  );
  return { sessionId, created: true };
}

/** One conversation per mode, each with its first message, unless the project has conversations already. */
async function seedConversations(deps: TaskDeps): Promise<string[]> {
  const earlier = await listConversations(deps.pool, { projectId: DEMO_PROJECT_ID, limit: DEMO_CONVERSATIONS.length });
  // Newest first: the ids in the order they were started.
  if (earlier.length) return earlier.map((c) => c.id).reverse();
  const ids: string[] = [];
  for (const c of DEMO_CONVERSATIONS) {
    const { sessionId } = await startConversation(
      deps,
      {
        projectId: DEMO_PROJECT_ID,
        title: c.title,
        mode: c.mode,
        ...("modeConfig" in c ? { modeConfig: c.modeConfig } : {}),
        message: c.message,
      },
      DEMO_ACTOR,
    );
    ids.push(sessionId);
  }
  return ids;
}

async function seed(deps: TaskDeps, dataDir: string): Promise<DemoSeedResult> {
  const repo = await ensureDemoRepo(dataDir);
  const lock = await deps.pool.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock(${SEED_LOCK_SQL})`);
    const existed = await projectExists(deps.pool, DEMO_PROJECT_ID);
    // The demo project is the demo's own: its definition is reset on every start.
    await upsertProject(deps.pool, {
      id: DEMO_PROJECT_ID,
      name: DEMO_PROJECT_NAME,
      repoPath: repo.path,
      allowlist: DEMO_ALLOWLIST,
      agents: DEMO_AGENTS,
      maxIterations: 3,
      // Deliver merges approved work into the branch `delivered` (main is checked out in the repository).
      settings: { delivery: { method: "merge", target: DEMO_DELIVERY_TARGET } },
    });
    const earlier = await firstSessionOf(deps, DEMO_PROJECT_ID);
    const forge = await seedForge(deps);
    const conversationIds = await seedConversations(deps);
    const base = {
      status: "seeded" as const,
      projectId: DEMO_PROJECT_ID,
      repoPath: repo.path,
      forgeSessionId: forge.sessionId,
      conversationIds,
    };
    if (earlier) {
      return {
        ...base,
        sessionId: earlier,
        created: { repo: repo.created, project: !existed, task: false },
        message: `demo: project "${DEMO_PROJECT_ID}" (simulated agents) is set up; its task ${earlier} was started on an earlier run (CATCAFE_DEMO=0 turns the demo off)`,
      };
    }
    const { sessionId } = await startTask(
      deps,
      { projectId: DEMO_PROJECT_ID, prompt: DEMO_TASK_PROMPT, title: DEMO_TASK_TITLE, mode: "proposal" },
      DEMO_ACTOR,
    );
    return {
      ...base,
      sessionId,
      created: { repo: repo.created, project: !existed, task: true },
      message: `demo: created project "${DEMO_PROJECT_ID}" and a proposal task waiting for your confirm: ${sessionId}; a Forge pipeline (it waits at its PRD gate): ${forge.sessionId}; a conversation per collaboration mode: /conversations`,
    };
  } finally {
    await lock.query(`SELECT pg_advisory_unlock(${SEED_LOCK_SQL})`).catch(() => {});
    lock.release();
  }
}

/**
 * Sets up the demo, idempotently. `db` is a database URL (a small pool is opened and closed
 * here, as `npm start` does) or the store and pool to use (tests).
 */
export async function seedDemo(db: string | TaskDeps, options: SeedDemoOptions): Promise<DemoSeedResult> {
  const { CATCAFE_DEMO: enabled } = parseEnv(ZDemoEnv, options.env ?? process.env);
  if (!enabled) return { status: "disabled", message: "demo: off (CATCAFE_DEMO turns it off)" };
  if (typeof db !== "string") return seed(db, options.dataDir);
  const pool = createPool(db, 2, { applicationName: "catcafe-demo" });
  try {
    return await seed({ pool, store: createAppEventStore(pool) }, options.dataDir);
  } finally {
    await pool.end().catch(() => {});
  }
}
