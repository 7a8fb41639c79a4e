// Binding an agent to its shell, brain and FSM before a run (req M5):
// the combination is checked as a whole (the shell can run without a terminal, the brain
// and shell provide what the manifest requires, the FSM answers the runner's events, the
// agent plays the role and output the workflow step needs) and turned into the runtime
// agent configuration the runner executes (server/agents/config.ts).
import { agentAccessRefusals, agentEnvPolicy, type AccessRefusal } from "../agents/access";
import { ZAgentConfig, type AgentConfig } from "../agents/config";
import type { AgentRole } from "../agents/types";
import type { OutputKind, WorkflowDefinition } from "../workflow/definition";
import { RUN_EVENTS } from "./builtins";
import { formatJsonPath, type ConfigError } from "./errors";
import {
  agentForRole,
  configFilePath,
  unknownReference,
  type ProjectConfig,
  type ResolvedAgent,
  type ResolvedBrain,
  type ResolvedShell,
} from "./project-config";
import { CAPABILITIES, type BrainProvider, type Capability, type FsmDefinition } from "./schemas";

export interface AgentBinding {
  agentId: string;
  role: AgentRole;
  agent: ResolvedAgent;
  shell: ResolvedShell | null;
  brain: ResolvedBrain | null;
  fsm: { id: string; definition: FsmDefinition };
  /** What the runner executes: a validated ZAgentConfig. */
  runtime: AgentConfig;
}

export interface BindStep {
  /** The workflow state running the step (for messages). */
  state: string;
  output: OutputKind;
}

export interface BindOptions {
  /** The role the workflow step needs; the agent must play it. */
  role?: AgentRole;
  /** The steps the agent will run, so their output format can be checked against the manifest. */
  steps?: readonly BindStep[];
}

export interface BindResult {
  binding: AgentBinding | null;
  errors: ConfigError[];
}

/** Which brains each coding CLI can talk to (their own provider's API, or a compatible endpoint). */
const CLI_PROVIDERS: Record<"claude" | "codex" | "gemini", readonly BrainProvider[]> = {
  claude: ["anthropic"],
  codex: ["openai"],
  gemini: [],
};

const JSON_OUTPUTS: readonly OutputKind[] = ["review_verdict", "test_plan", "task_spec"];
const PROSE_OUTPUTS: readonly OutputKind[] = ["text"];

/** Agent kinds the runner of this build can execute (the discriminator values of ZAgentConfig). */
export function runtimeAgentKinds(): string[] {
  return ZAgentConfig.options.flatMap((option) => [...option.shape.kind.values]);
}

/** The line that chose an agent's shell or brain: the agent's own field, or a default. */
function refLocation(config: ProjectConfig, agent: ResolvedAgent, which: "shell" | "brain"): { file: string; path: string } {
  const field = which === "shell" ? "defaultShell" : "defaultBrain";
  switch (agent[which].source) {
    case "agent":
      return { file: configFilePath("agents.json"), path: formatJsonPath(["agents", agent.index, field]) };
    case "projects":
      return { file: configFilePath("projects.json"), path: field };
    case "settings":
      return { file: config.settingsFile, path: field };
    case "none":
      return { file: configFilePath("agents.json"), path: formatJsonPath(["agents", agent.index]) };
  }
}

function describeSource(agent: ResolvedAgent, which: "shell" | "brain"): string {
  const source = agent[which].source;
  return source === "agent" ? "" : ` (the default from ${source === "projects" ? "projects.json" : "settings.json"})`;
}

/** Why `fsm` cannot follow a run (start, then success or error), or null when it can. */
function fsmProblems(id: string, fsm: FsmDefinition, agentId: string): Array<{ path: string; message: string }> {
  const at = (...path: Array<string | number>) => formatJsonPath(["fsms", id, ...path]);
  const initial = fsm.states[fsm.initial];
  const start = initial?.on[RUN_EVENTS.start];
  if (!start) {
    return [
      {
        path: at("states", fsm.initial, "on"),
        message: `the initial state has no "${RUN_EVENTS.start}" transition, but every run of agent "${agentId}" begins with "${RUN_EVENTS.start}"`,
      },
    ];
  }
  const running = fsm.states[start.target];
  const problems: Array<{ path: string; message: string }> = [];
  for (const event of [RUN_EVENTS.success, RUN_EVENTS.error]) {
    if (!running?.on[event]) {
      problems.push({
        path: at("states", start.target, "on"),
        message: `no "${event}" transition, but the runner ends every run of agent "${agentId}" with "${RUN_EVENTS.success}" or "${RUN_EVENTS.error}"`,
      });
    }
  }
  return problems;
}

function runtimeCandidate(agent: ResolvedAgent, shell: ResolvedShell | null, brain: ResolvedBrain | null): Record<string, unknown> {
  const base: Record<string, unknown> = {
    id: agent.id,
    ...(agent.name !== undefined ? { name: agent.name } : {}),
    manifest: {
      capabilities: agent.manifest.capabilities,
      ...(agent.manifest.allowedFiles ? { allowedFiles: agent.manifest.allowedFiles } : {}),
    },
  };
  // The scripted brain simulates a whole agent (edits included): whatever shell is bound, it plays.
  if (brain?.provider === "scripted") return { ...base, kind: "scripted", responses: brain.responses };
  if (shell) {
    if (shell.kind === "command") {
      // A command learns its brain from the environment; the key is passed through by name only.
      const brainEnv: Record<string, string> = brain
        ? {
            CATCAFE_BRAIN_PROVIDER: brain.provider,
            CATCAFE_BRAIN_MODEL: brain.model,
            ...(brain.baseUrl ? { CATCAFE_BRAIN_BASE_URL: brain.baseUrl } : {}),
            ...(brain.apiKeyEnv ? { CATCAFE_BRAIN_API_KEY_ENV: brain.apiKeyEnv } : {}),
          }
        : {};
      const env = { ...(shell.env ?? {}), ...brainEnv };
      const passEnv = [...new Set([...shell.passEnv, ...(brain?.apiKeyEnv ? [brain.apiKeyEnv] : [])])];
      return {
        ...base,
        kind: "command",
        argv: [shell.command, ...shell.args],
        prompt: shell.prompt,
        // A command bound to a brain calls it itself: its sandbox lets it reach the network.
        network: shell.network || brain !== null,
        ...(Object.keys(env).length ? { env } : {}),
        ...(passEnv.length ? { passEnv } : {}),
        ...(shell.timeoutMs !== undefined ? { timeoutMs: shell.timeoutMs } : {}),
      };
    }
    // A coding CLI talks to its provider itself: the brain gives it the model, endpoint and key variable.
    return {
      ...base,
      kind: shell.kind,
      ...(shell.command !== shell.kind ? { command: shell.command } : {}),
      extraArgs: shell.args,
      ...(shell.env ? { env: shell.env } : {}),
      ...(shell.passEnv.length ? { passEnv: shell.passEnv } : {}),
      ...(shell.permissions ? { permissions: shell.permissions } : {}),
      ...(shell.timeoutMs !== undefined ? { timeoutMs: shell.timeoutMs } : {}),
      providerRetries: shell.providerRetries,
      isolateHome: shell.isolateHome,
      // The bound brain's model, endpoint, key variable and rate limit first; the shell's own fill in.
      ...pick({ model: brain?.model ?? shell.model, apiKeyEnv: brain?.apiKeyEnv ?? shell.apiKeyEnv }),
      ...(brain?.baseUrl ? { baseUrl: brain.baseUrl } : pick({ baseUrl: shell.baseUrl, baseUrlEnv: shell.baseUrlEnv })),
      rateLimit: brain?.rateLimit ?? shell.rateLimit,
    };
  }
  // A brain alone: the HTTP brain agents (`openai`, `anthropic`) of server/agents/config.ts.
  const only = brain!;
  return {
    ...base,
    kind: only.provider,
    model: only.model,
    ...(only.baseUrl ? { baseUrl: only.baseUrl } : {}),
    ...(only.apiKeyEnv ? { apiKeyEnv: only.apiKeyEnv } : {}),
    ...(only.temperature !== undefined ? { temperature: only.temperature } : {}),
    ...(only.maxTokens !== undefined ? { maxTokens: only.maxTokens } : {}),
    rateLimit: { minIntervalMs: only.rateLimit.minIntervalMs },
  };
}

export function bindAgent(config: ProjectConfig, agentId: string, options: BindOptions = {}): BindResult {
  const agentsFile = configFilePath("agents.json");
  const agent = config.agents.find((a) => a.id === agentId);
  if (!agent) {
    return {
      binding: null,
      errors: [
        {
          file: agentsFile,
          path: "agents",
          message: unknownReference(
            "agent",
            agentId,
            config.agents.map((a) => a.id),
          ),
        },
      ],
    };
  }
  const errors: ConfigError[] = [];
  const at = (...path: Array<string | number>) => formatJsonPath(["agents", agent.index, ...path]);

  if (options.role && agent.role !== options.role) {
    const steps = options.steps?.map((s) => `"${s.state}"`).join(", ");
    errors.push({
      file: agentsFile,
      path: at("role"),
      message: `agent "${agent.id}" is a ${agent.role}, but ${steps ? `the step ${steps} needs` : "the run needs"} a ${options.role}`,
    });
  }

  let shell: ResolvedShell | null = null;
  if (agent.shell.id !== null) {
    const where = refLocation(config, agent, "shell");
    shell = config.shells[agent.shell.id] ?? null;
    if (!shell) errors.push({ ...where, message: unknownReference("shell", agent.shell.id, Object.keys(config.shells)) });
    else if (!shell.nonInteractive) {
      errors.push({
        ...where,
        message: `shell "${shell.id}"${describeSource(agent, "shell")} cannot run non-interactively (nonInteractive is false in ${configFilePath("shells.json")}), so agent "${agent.id}" cannot run in a session`,
      });
    }
  }
  let brain: ResolvedBrain | null = null;
  if (agent.brain.id !== null) {
    brain = config.brains[agent.brain.id] ?? null;
    if (!brain)
      errors.push({
        ...refLocation(config, agent, "brain"),
        message: unknownReference("brain", agent.brain.id, Object.keys(config.brains)),
      });
  }
  if (shell && brain && brain.provider !== "scripted" && shell.kind !== "command" && !CLI_PROVIDERS[shell.kind].includes(brain.provider)) {
    const speaks = CLI_PROVIDERS[shell.kind];
    errors.push({
      ...refLocation(config, agent, "brain"),
      message: `brain "${brain.id}" (${brain.provider}) cannot drive shell "${shell.id}" (${shell.kind}), which ${speaks.length ? `talks to ${speaks.join(", ")} brains only` : "uses its own models: leave the brain out"}`,
    });
  }
  if (agent.shell.id === null && agent.brain.id === null) {
    errors.push({
      file: agentsFile,
      path: at(),
      message: "has neither a shell nor a brain: set defaultShell or defaultBrain here, or a default in projects.json or settings.json",
    });
  }

  // What the manifest requires must come from the brain (thinking) or the shell (acting).
  if (shell || brain) {
    const provided = new Set<Capability>(
      brain?.provider === "scripted" ? CAPABILITIES : [...(brain?.capabilities ?? []), ...(shell?.capabilities ?? [])],
    );
    agent.manifest.capabilities.forEach((capability, k) => {
      if (provided.has(capability)) return;
      const offers = [
        brain ? `brain "${brain.id}" (provides: ${brain.capabilities.join(", ") || "nothing listed"})` : null,
        shell ? `shell "${shell.id}" (provides: ${shell.capabilities.join(", ") || "nothing listed"})` : null,
      ].filter(Boolean);
      errors.push({
        file: agentsFile,
        path: at("manifest", "capabilities", k),
        message: `"${capability}" is required but not provided by ${offers.join(" or ")}`,
      });
    });
  }

  const fsmDefinition = config.fsms[agent.fsm];
  if (!fsmDefinition)
    errors.push({ file: agentsFile, path: at("fsm"), message: unknownReference("FSM", agent.fsm, Object.keys(config.fsms)) });
  else errors.push(...fsmProblems(agent.fsm, fsmDefinition, agent.id).map((p) => ({ file: configFilePath("runtimes.json"), ...p })));

  const format = agent.manifest.output?.format ?? "any";
  for (const step of options.steps ?? []) {
    if (format === "text" && JSON_OUTPUTS.includes(step.output)) {
      errors.push({
        file: agentsFile,
        path: at("manifest", "output", "format"),
        message: `is "text", but the "${step.state}" step needs strict JSON (${step.output})`,
      });
    } else if (format === "json" && PROSE_OUTPUTS.includes(step.output)) {
      errors.push({
        file: agentsFile,
        path: at("manifest", "output", "format"),
        message: `is "json", but the "${step.state}" step needs prose (${step.output})`,
      });
    }
  }

  if (errors.length) return { binding: null, errors };

  const candidate = runtimeCandidate(agent, shell, brain);
  const kinds = runtimeAgentKinds();
  if (!kinds.includes(String(candidate.kind))) {
    const chosenBy = shell && brain?.provider !== "scripted" ? `shell "${shell.id}"` : `brain "${brain?.id}"`;
    const where = refLocation(config, agent, shell && brain?.provider !== "scripted" ? "shell" : "brain");
    // Only reachable while server/agents lacks a kind the configuration can name.
    return {
      binding: null,
      errors: [
        {
          ...where,
          message: `${chosenBy} needs the "${String(candidate.kind)}" agent runtime, which this build does not have yet (available: ${kinds.join(", ")})`,
        },
      ],
    };
  }
  const runtime = ZAgentConfig.safeParse(candidate);
  if (!runtime.success) {
    const issues = runtime.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    return { binding: null, errors: [{ file: agentsFile, path: at(), message: `cannot be turned into a runnable agent: ${issues}` }] };
  }
  // The variables it would be handed: the one rule the runner applies again before each run.
  const refused = agentAccessRefusals(runtime.data, agentEnvPolicy(config.settings));
  if (refused.length) {
    return { binding: null, errors: refused.map((r) => ({ ...accessLocation(agent, shell, brain, r), message: r.message })) };
  }
  return {
    binding: {
      agentId: agent.id,
      role: agent.role,
      agent,
      shell,
      brain,
      fsm: { id: agent.fsm, definition: fsmDefinition! },
      runtime: runtime.data,
    },
    errors: [],
  };
}

/**
 * The steps of `definition` that run an agent, grouped by role (the commands step runs no
 * agent). With `mode`, only the states a task in that mode can reach: an implementation-mode
 * task never runs the proposal roundtable, so its prose steps do not constrain the agents.
 */
export function agentStepsByRole(definition: WorkflowDefinition, mode?: string): Map<AgentRole, BindStep[]> {
  const reached = new Set([definition.initial]);
  const queue = [definition.initial];
  while (queue.length) {
    const state = definition.states[queue.shift()!];
    if (!state || state.type === "terminal") continue;
    for (const transitions of Object.values(state.on)) {
      for (const t of transitions) {
        const guardMode = t.guard?.startsWith("mode_") ? t.guard.slice("mode_".length) : null;
        if (mode !== undefined && guardMode !== null && guardMode !== mode) continue;
        if (!reached.has(t.target)) {
          reached.add(t.target);
          queue.push(t.target);
        }
      }
    }
  }
  const byRole = new Map<AgentRole, BindStep[]>();
  for (const [state, spec] of Object.entries(definition.states)) {
    if (!reached.has(state) || spec.type !== "step" || spec.step.output === "commands") continue;
    byRole.set(spec.step.role, [...(byRole.get(spec.step.role) ?? []), { state, output: spec.step.output }]);
  }
  return byRole;
}

export interface RoleBindings {
  /** role → binding, for every role the configuration has an agent for. */
  bindings: Partial<Record<AgentRole, AgentBinding>>;
  /** Roles the workflow needs that no agent in agents.json plays. */
  unconfigured: AgentRole[];
  errors: ConfigError[];
}

/** Binds, for each role `definition` needs (in `mode`), the agent of highest priority playing it. */
export function bindWorkflowRoles(
  config: ProjectConfig,
  definition: WorkflowDefinition,
  mode?: string,
  /** role → the `.catcafe/agents.json` agent to bind instead of the highest-priority one (`catcafe go <agent>`). */
  chosen: Partial<Record<AgentRole, string>> = {},
): RoleBindings {
  const result: RoleBindings = { bindings: {}, unconfigured: [], errors: [] };
  for (const [role, steps] of agentStepsByRole(definition, mode)) {
    const wanted = chosen[role];
    const agent = wanted ? config.agents.find((a) => a.id === wanted && a.role === role) : agentForRole(config, role);
    if (!agent) {
      result.unconfigured.push(role);
      continue;
    }
    const bound = bindAgent(config, agent.id, { role, steps });
    if (bound.binding) result.bindings[role] = bound.binding;
    result.errors.push(...bound.errors);
  }
  return result;
}

/** The line that named a refused variable: the shell's passEnv or apiKeyEnv, the brain's apiKeyEnv, else the agent. */
function accessLocation(
  agent: ResolvedAgent,
  shell: ResolvedShell | null,
  brain: ResolvedBrain | null,
  refused: AccessRefusal,
): { file: string; path: string } {
  const k = shell?.passEnv.indexOf(refused.name) ?? -1;
  if (shell && !shell.builtin && k >= 0)
    return { file: configFilePath("shells.json"), path: formatJsonPath(["shells", shell.id, "passEnv", k]) };
  if (brain?.apiKeyEnv === refused.name)
    return { file: configFilePath("brains.json"), path: formatJsonPath(["brains", brain.id, "apiKeyEnv"]) };
  if (shell && !shell.builtin && shell.kind !== "command" && shell.apiKeyEnv === refused.name)
    return { file: configFilePath("shells.json"), path: formatJsonPath(["shells", shell.id, "apiKeyEnv"]) };
  return { file: configFilePath("agents.json"), path: formatJsonPath(["agents", agent.index]) };
}

/** The entries of `fields` that are set. */
function pick<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}
