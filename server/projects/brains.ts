// The brains projects use, and their checks (req M3). `checkProjectBrains` is
// `catcafe brains check`: every brain of one project, from its `.catcafe/brains.json`
// (working tree) and the HTTP model agents of its project record. `brainsOverview` and
// `checkConfiguredBrain` serve the settings pages: every project's brains, with
// `.catcafe/` read at HEAD, and the Check button for one of them. One cheap request per
// check (server/agents/brain-check.ts), with the server's environment holding the keys, and
// none to a host on a non-public address unless the project's access.privateHosts in force
// allows it; scripted brains have nothing to reach and say so. Never a secret: only the key's
// variable name.
import { z } from "zod";
import { agentEnvPolicy, type AgentEnvPolicy } from "../agents/access";
import { ZAgentConfig, type BrainAgentConfigInput } from "../agents/config";
import { checkBrain, type BrainCheckResult } from "../agents/brain-check";
import { loadConfigAtHead } from "../config/at-head";
import { loadProjectConfig } from "../config/load";
import type { ResolvedBrain } from "../config/project-config";
import { loadSettings, webSettingsPath } from "../config/settings";
import type { Db, Queryable } from "../db/pool";
import { AppError } from "../errors";
import type { EventStore } from "../events/store";
import { projectPrivateHosts } from "./access";
import { serverOverride } from "./config-edits";
import { withOverride } from "../config/schemas";
import { getProject, listProjectRecords } from "./projects";

export const ZCheckBrainsInput = z.object({
  projectId: z.string().min(1),
  /** Only these brains (ids from brains.json, or `role:<role>` for a project-record agent). */
  brains: z.array(z.string().min(1).max(100)).max(50).optional(),
});

export interface BrainCheckItem {
  brain: string;
  /** Where it is defined. */
  source: "brains.json" | "project record";
  provider: string;
  model: string;
  /** Null for a scripted brain (simulated: no endpoint to check). */
  result: BrainCheckResult | null;
  ok: boolean;
  message: string;
}

interface Candidate {
  brain: string;
  source: BrainCheckItem["source"];
  provider: string;
  model: string;
  /** null: scripted. */
  config: BrainAgentConfigInput | null;
}

function fromBrainsFile(brain: ResolvedBrain): Candidate {
  const base = { brain: brain.id, source: "brains.json" as const, provider: brain.provider, model: brain.model };
  if (brain.provider === "scripted") return { ...base, config: null };
  return {
    ...base,
    config: {
      kind: brain.provider,
      id: "brain-check",
      model: brain.model,
      ...(brain.baseUrl ? { baseUrl: brain.baseUrl } : {}),
      ...(brain.apiKeyEnv ? { apiKeyEnv: brain.apiKeyEnv } : {}),
      ...(brain.maxTokens !== undefined ? { maxTokens: brain.maxTokens } : {}),
      rateLimit: { minIntervalMs: brain.rateLimit.minIntervalMs },
    },
  };
}

function fromProjectRecord(agents: Record<string, unknown>): Candidate[] {
  return Object.entries(agents).flatMap(([role, value]): Candidate[] => {
    const agent = value as { kind?: unknown; model?: unknown } | null;
    const kind = typeof agent?.kind === "string" ? agent.kind : "";
    const model = typeof agent?.model === "string" ? agent.model : kind;
    const base = { brain: `role:${role}`, source: "project record" as const, model };
    if (kind === "openai" || kind === "anthropic") return [{ ...base, provider: kind, config: value as BrainAgentConfigInput }];
    if (kind === "scripted") return [{ ...base, provider: "scripted", config: null }];
    return []; // command and CLI agents have no brain of their own to check here
  });
}

async function runCheck(
  candidate: Candidate,
  allowed: { keyPolicy: AgentEnvPolicy; privateHosts: readonly string[] },
): Promise<BrainCheckItem> {
  const { config, ...item } = candidate;
  if (!config) return { ...item, result: null, ok: true, message: "scripted (simulated) brain: no endpoint to check" };
  try {
    const result = await checkBrain(config, allowed);
    return { ...item, result, ok: result.ok, message: result.message };
  } catch (err) {
    // An invalid definition (already reported by `config validate`) is a failed check, not a crash.
    return {
      ...item,
      result: null,
      ok: false,
      message: `cannot check: ${err instanceof z.ZodError ? (err.issues[0]?.message ?? "invalid brain") : (err as Error).message}`,
    };
  }
}

/** What a check reads: the projects, and the server's settings overrides (for access.privateHosts). */
interface CheckDeps {
  pool: Db;
  store: EventStore;
}

export async function checkProjectBrains(deps: CheckDeps, raw: z.input<typeof ZCheckBrainsInput>): Promise<BrainCheckItem[]> {
  const input = ZCheckBrainsInput.parse(raw);
  const { pool } = deps;
  const project = await getProject(pool, input.projectId);
  const settings = loadSettings(webSettingsPath());
  const loaded = await loadProjectConfig(project.repoPath, { settings: settings.settings, settingsFile: settings.file });
  if (loaded.found && !loaded.config) {
    throw new AppError(
      "PRECONDITION_FAILED",
      `project ${project.id}'s .catcafe/ is invalid (run \`catcafe config validate --project ${project.id}\`): ${loaded.errors.length} error(s)`,
    );
  }
  const candidates = [...Object.values(loaded.config?.brains ?? {}).map(fromBrainsFile), ...fromProjectRecord(project.agents)];
  const wanted = input.brains ? new Set(input.brains) : null;
  if (wanted) {
    const unknown = [...wanted].filter((b) => !candidates.some((c) => c.brain === b));
    if (unknown.length)
      throw new AppError(
        "NOT_FOUND",
        `project ${project.id} has no brain ${unknown.join(", ")} (brains: ${candidates.map((c) => c.brain).join(", ") || "none"})`,
      );
  }
  // The settings in force for the project: which key variables a check may read, which private hosts it may reach.
  const inForce = withOverride(withOverride(settings.settings, (await serverOverride(deps.store)).override), project.settings);
  const allowed = { keyPolicy: agentEnvPolicy(inForce), privateHosts: inForce.access.privateHosts };
  return Promise.all(candidates.filter((c) => !wanted || wanted.has(c.brain)).map((c) => runCheck(c, allowed)));
}

// --- every project's brains, for the settings pages -------------------------------------

export interface BrainOverview {
  projectId: string;
  source: "project" | "config";
  id: string;
  provider: string;
  model: string;
  baseUrl: string | null;
  /** The name of the variable holding the key (never its value). */
  apiKeyEnv: string | null;
  /** Whether that variable is set in the web server's environment (where Check runs). */
  keySet: boolean | null;
  minIntervalMs: number | null;
  capabilities: string[];
  simulated: boolean;
  /** HTTP brains can be checked; the scripted brain answers from its script. */
  checkable: boolean;
  /** Roles whose agent uses it. */
  usedBy: string[];
}

interface ResolvedCheckTarget {
  overview: BrainOverview;
  input: BrainAgentConfigInput | null;
}

async function brainTargets(db: Queryable): Promise<ResolvedCheckTarget[]> {
  const records = await listProjectRecords(db);
  const perProject = await Promise.all(
    records.map(async (record): Promise<ResolvedCheckTarget[]> => {
      const targets: ResolvedCheckTarget[] = [];
      for (const [role, raw] of Object.entries(record.agents)) {
        const parsed = ZAgentConfig.safeParse(raw);
        if (!parsed.success) continue;
        const a = parsed.data;
        if (a.kind !== "openai" && a.kind !== "anthropic" && a.kind !== "scripted") continue;
        const http = a.kind === "openai" || a.kind === "anthropic" ? a : null;
        const existing = targets.find((t) => t.overview.id === a.id);
        if (existing) {
          existing.overview.usedBy.push(role);
          continue;
        }
        targets.push({
          overview: {
            projectId: record.id,
            source: "project",
            id: a.id,
            provider: a.kind,
            model: http?.model ?? "scripted",
            baseUrl: http?.baseUrl ?? null,
            apiKeyEnv: http?.apiKeyEnv ?? null,
            keySet: http?.apiKeyEnv ? Boolean(process.env[http.apiKeyEnv]) : null,
            minIntervalMs: http?.rateLimit.minIntervalMs ?? null,
            capabilities: [],
            simulated: a.kind === "scripted",
            checkable: http !== null,
            usedBy: [role],
          },
          input: http,
        });
      }
      const { config } = await loadConfigAtHead(record.repoPath);
      for (const b of Object.values(config?.brains ?? {})) {
        const http = b.provider === "openai" || b.provider === "anthropic";
        targets.push({
          overview: {
            projectId: record.id,
            source: "config",
            id: b.id,
            provider: b.provider,
            model: b.model,
            baseUrl: b.baseUrl ?? null,
            apiKeyEnv: b.apiKeyEnv ?? null,
            keySet: b.apiKeyEnv ? Boolean(process.env[b.apiKeyEnv]) : null,
            minIntervalMs: b.rateLimit.minIntervalMs,
            capabilities: [...b.capabilities],
            simulated: b.provider === "scripted",
            checkable: http,
            usedBy: config!.agents.filter((a) => a.brain.id === b.id).map((a) => `${a.role} (${a.id})`),
          },
          input: http
            ? {
                kind: b.provider as "openai" | "anthropic",
                id: b.id,
                model: b.model,
                ...(b.baseUrl ? { baseUrl: b.baseUrl } : {}),
                ...(b.apiKeyEnv ? { apiKeyEnv: b.apiKeyEnv } : {}),
                rateLimit: { minIntervalMs: b.rateLimit.minIntervalMs },
              }
            : null,
        });
      }
      return targets;
    }),
  );
  return perProject.flat();
}

export async function brainsOverview(db: Queryable): Promise<BrainOverview[]> {
  return (await brainTargets(db)).map((t) => t.overview);
}

/** What the settings page's Check button shows: the check, or why it could not run. */
export type BrainCheckOutcome = { ok: true; result: BrainCheckResult } | { ok: false; error: string };

export const ZCheckBrainInput = z.object({
  projectId: z.string().min(1).max(100),
  source: z.enum(["project", "config"]),
  brainId: z.string().min(1).max(100),
});
export type TCheckBrainInput = z.input<typeof ZCheckBrainInput>;

/**
 * Checks a configured brain (connectivity, key, model, rate limit). The brain is looked up
 * on the server by its project and id: a caller can never point the check at another URL.
 */
/**
 * `asAdmin`: the caller is an admin. A brain defined by the repository (`.catcafe/`, source
 * "config") names its own endpoint, so only an admin's check sends it the key; anyone
 * else's check goes without one (the key is the admin's to risk, never an operator's).
 */
export async function checkConfiguredBrain(
  deps: CheckDeps,
  raw: TCheckBrainInput,
  options: { asAdmin: boolean } = { asAdmin: false },
): Promise<BrainCheckResult & { brain: BrainOverview }> {
  const input = ZCheckBrainInput.parse(raw);
  const target = (await brainTargets(deps.pool)).find(
    (t) => t.overview.projectId === input.projectId && t.overview.source === input.source && t.overview.id === input.brainId,
  );
  if (!target) throw new AppError("NOT_FOUND", `no brain "${input.brainId}" in project ${input.projectId} (${input.source})`);
  if (!target.input)
    throw new AppError(
      "PRECONDITION_FAILED",
      `brain "${input.brainId}" is ${target.overview.provider}: it answers from its script and has nothing to check`,
    );
  const result = await checkBrain(target.input, {
    sendKey: options.asAdmin || target.overview.source !== "config",
    privateHosts: await projectPrivateHosts(deps.pool, deps.store, input.projectId, { settingsFile: webSettingsPath() }),
  });
  return { ...result, brain: target.overview };
}
