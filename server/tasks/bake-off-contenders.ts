// A bake-off's contenders as a person names them (docs/bake-off.md), bound when the task
// starts: each names a coder known to the project — an agent of the repository's
// `.catcafe/agents.json` that plays coder, or an agent of the project record — and may change
// its model (the same CLI with two models). What the start records (TaskStarted.bakeOff) is the
// agent each contender runs with, so a later edit of the configuration changes nothing.
import { z } from "zod";
import type { ProjectConfig } from "../config/project-config";
import { AppError } from "../errors";
import { ZBakeOffContenderInput, ZBakeOffStart, type BakeOffContenderSpec } from "../events/bake-off-catalog";
import type { AgentSnapshot } from "../events/step-contract";

export { ZBakeOffContenderInput, ZBakeOffStart };
export type { TBakeOffStart } from "../events/bake-off-catalog";

/** A refusal of the contenders, its message also the field's error (the New task form shows it under the field). */
function refused(message: string): AppError {
  return new AppError("INVALID_INPUT", message, { fieldErrors: { "bakeOff.contenders": [message] } });
}

/** Kinds whose configuration takes a model: the CLI shells and the HTTP brains (a command or a script has none). */
const MODEL_KINDS = new Set(["claude", "codex", "gemini", "openai", "anthropic"]);

/** How a contender's name is bound: the repository's coder with that id, through the run's binding; else null. */
export type BindCoder = (agentId: string) => AgentSnapshot;

export interface ContenderSources {
  /** The repository's `.catcafe/` at the base commit (null without one). */
  config: ProjectConfig | null;
  /** The project record's agents, by role. */
  recordAgents: Record<string, unknown>;
  bindCoder: BindCoder;
}

/** The names a contender may take here: the repository's coders, then the record's agents' ids. */
function knownCoders(sources: ContenderSources): string[] {
  const fromConfig = sources.config?.agents.filter((a) => a.role === "coder").map((a) => a.id) ?? [];
  const fromRecord = Object.values(sources.recordAgents).flatMap((a) =>
    typeof (a as { id?: unknown })?.id === "string" ? [(a as { id: string }).id] : [],
  );
  return [...new Set([...fromConfig, ...fromRecord])];
}

function agentFor(name: string, sources: ContenderSources): AgentSnapshot {
  const configured = sources.config?.agents.find((a) => a.id === name);
  if (configured) {
    if (configured.role !== "coder") {
      throw refused(`agent ${name} plays ${configured.role}, not coder: a contender codes`);
    }
    return sources.bindCoder(name);
  }
  const recorded = Object.values(sources.recordAgents).find((a) => (a as { id?: unknown })?.id === name);
  if (recorded) return recorded as AgentSnapshot;
  const known = knownCoders(sources);
  throw refused(`no agent ${name} in this project (coders it knows: ${known.join(", ") || "none"})`);
}

function withModel(agent: AgentSnapshot, name: string, model: string | undefined): AgentSnapshot {
  if (model === undefined) return agent;
  if (!MODEL_KINDS.has(String(agent.kind))) {
    throw refused(`agent ${name} (${String(agent.kind)}) takes no model: only CLI shells and HTTP brains do`);
  }
  return { ...agent, model };
}

/** The contenders as the start records them: c1…cN, each with its agent bound; two alike are refused. */
export function bindContenders(input: z.output<typeof ZBakeOffStart>, sources: ContenderSources): BakeOffContenderSpec[] {
  const contenders = input.contenders.map((c, i) => ({
    id: `c${i + 1}`,
    coder: c.coder,
    ...(c.model ? { model: c.model } : {}),
    label: c.label ?? (c.model ? `${c.coder}:${c.model}` : c.coder),
    agent: withModel(agentFor(c.coder, sources), c.coder, c.model),
  }));
  const seen = new Map<string, string>();
  for (const c of contenders) {
    const key = `${c.coder}\u0000${c.model ?? ""}`;
    const twin = seen.get(key);
    if (twin) {
      throw refused(`contenders ${twin} and ${c.id} are the same (${c.label}): give each another coder or model`);
    }
    seen.set(key, c.id);
  }
  return contenders;
}
