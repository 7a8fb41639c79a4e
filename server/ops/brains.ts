// `catcafe brains check` (req M3): the "check" action for every brain a project uses: the
// brains of its `.catcafe/brains.json` (working tree) and the HTTP model agents of its
// project record. One cheap request each (server/agents/brain-check.ts), with the server's
// environment holding the keys; scripted brains have nothing to reach and say so.
import { z } from "zod";
import type { BrainAgentConfigInput } from "../agents/config";
import { checkBrain, type BrainCheckResult } from "../agents/brain-check";
import { loadProjectConfig } from "../config/load";
import type { ResolvedBrain } from "../config/project-config";
import { loadSettings } from "../config/settings";
import type { Db } from "../db/pool";
import { AppError } from "../errors";
import { getProject } from "../projects/projects";
import { webSettingsPath } from "./settings";

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

async function runCheck(candidate: Candidate): Promise<BrainCheckItem> {
  const { config, ...item } = candidate;
  if (!config) return { ...item, result: null, ok: true, message: "scripted (simulated) brain: no endpoint to check" };
  try {
    const result = await checkBrain(config);
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

export async function checkProjectBrains(pool: Db, raw: z.input<typeof ZCheckBrainsInput>): Promise<BrainCheckItem[]> {
  const input = ZCheckBrainsInput.parse(raw);
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
  return Promise.all(candidates.filter((c) => !wanted || wanted.has(c.brain)).map(runCheck));
}
