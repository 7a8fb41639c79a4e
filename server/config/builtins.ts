// What exists without being configured: the execution FSM execution_fsm_v1 (req M5)
// and the three known CLIs as shells, so `"defaultShell": "claude"` works out of the box.
// Also the default capabilities of well-known model families (the capability map of req M3:
// claude-3-5-sonnet → reasoning, code-generation).
import type { BrainCapability, Capability, FsmDefinition, ShellKind } from "./schemas";
import { BUILTIN_FSM_ID, CAPABILITIES } from "./schemas";

export const EXECUTION_FSM_V1: FsmDefinition = {
  description: "One agent run: IDLE until started, EXECUTING while shell + brain work, then COMPLETED or FAILED.",
  initial: "IDLE",
  states: {
    IDLE: {
      terminal: false,
      description: "The execution context exists; nothing has run.",
      on: { start: { target: "EXECUTING", emit: ["execution_started"] } },
    },
    EXECUTING: {
      terminal: false,
      description: "Shell + brain are working.",
      on: { success: { target: "COMPLETED", emit: ["execution_completed"] }, error: { target: "FAILED", emit: ["execution_failed"] } },
    },
    COMPLETED: { terminal: true, description: "The run succeeded.", on: {} },
    FAILED: { terminal: true, description: "The run failed.", on: {} },
  },
};

export const BUILTIN_FSMS: Readonly<Record<string, FsmDefinition>> = { [BUILTIN_FSM_ID]: EXECUTION_FSM_V1 };

/** Events the runner drives every execution FSM with (req M5). */
export const RUN_EVENTS = { start: "start", success: "success", error: "error" } as const;

/** The known CLIs, usable by id without a shells.json entry. */
export const BUILTIN_SHELL_KINDS: readonly ShellKind[] = ["claude", "codex", "gemini"];

/** A shell's capabilities when shells.json does not list them. */
export function defaultShellCapabilities(kind: ShellKind): Capability[] {
  // The coding CLIs bring their own model; a generic command is only known to run in the workspace.
  if (kind === "command") return ["edit-files", "run-commands", "repo-context"];
  return [...CAPABILITIES];
}

const CODING_MODEL: BrainCapability[] = ["reasoning", "code-generation", "code-review", "planning", "testing", "long-context", "tool-use"];
const MODEL_FAMILIES: ReadonlyArray<[RegExp, BrainCapability[]]> = [
  [/^claude-/, CODING_MODEL],
  [/^(?:gpt-4|gpt-5|o[1-9])/, CODING_MODEL],
  [/^gemini-/, CODING_MODEL],
  [/^(?:qwen.*coder|deepseek|codestral|codellama)/, ["code-generation", "code-review", "testing"]],
];

/** Capabilities of a model by its name, when brains.json does not list them. */
export function defaultModelCapabilities(provider: string, model: string): BrainCapability[] {
  // The scripted brain stands in for any model in tests and demos.
  if (provider === "scripted")
    return ["reasoning", "code-generation", "code-review", "planning", "testing", "long-context", "vision", "tool-use"];
  const family = MODEL_FAMILIES.find(([re]) => re.test(model.toLowerCase()));
  return family ? [...family[1]] : [];
}
