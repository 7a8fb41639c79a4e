// Agent configuration: one zod schema per agent kind, joined in a discriminated union on
// `kind` so a new shell or brain is one more member. Everything an agent needs to run is
// validated here, before any agent is created.
import path from "node:path";
import { z } from "zod";
import { MAX_AGENT_OUTPUT_BYTES } from "./types";
import { isServerSecret, SERVER_SECRET_ENV } from "../process/env";

const ZAgentId = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "use letters, digits, '.', '_' and '-', starting with a letter or digit");

/** What an agent may do (req M4): capabilities, and the files it may change (globs). */
export const ZAgentManifest = z.strictObject({
  capabilities: z.array(z.string().min(1)).default([]),
  /** Globs relative to the repository; changes outside them are rejected by the orchestrator. */
  allowedFiles: z.array(z.string().min(1)).min(1).optional(),
});

/** Fields every agent kind has. */
/** Skill tags: what expert routing (a conversation's expert_routing mode) matches a message against. */
export const ZSkills = z.array(z.string().trim().min(1).max(50)).max(20);

const ZAgentBase = z.object({
  id: ZAgentId,
  name: z.string().min(1).max(200).optional(),
  manifest: ZAgentManifest.optional(),
  skills: ZSkills.optional(),
  /** Only runners with all these labels (CATCAFE_RUNNER_LABELS) run this agent's steps (docs/scaling.md). */
  runnerLabels: z
    .array(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "use letters, digits, '.', '_' and '-'"))
    .max(20)
    .optional(),
});

/**
 * Why `relativePath` may not name a file inside a workspace, or null when it may: it must be
 * relative, use '/' as separator, and never climb out with '..'. (Symlinks are checked where
 * the workspace is known.)
 */
export function relativePathProblem(relativePath: string): string | null {
  if (relativePath === "") return "is empty";
  if (relativePath.includes("\0")) return "contains a NUL byte";
  if (relativePath.includes("\\")) return "contains a backslash (use '/')";
  if (path.posix.isAbsolute(relativePath) || /^[A-Za-z]:/.test(relativePath)) return "is absolute";
  if (relativePath.split("/").includes("..")) return "contains '..'";
  const normalized = path.posix.normalize(relativePath);
  if (normalized === "." || normalized === "./" || normalized.endsWith("/")) return "does not name a file";
  return null;
}

/** Files to write (string content) or delete (null), keyed by path inside the workspace. */
const ZWorkspaceFiles = z.record(z.string(), z.string().nullable()).superRefine((files, ctx) => {
  // A refinement of the whole record rather than of its keys, so that inside a union the
  // error still names the offending path instead of "Invalid input".
  for (const p of Object.keys(files)) {
    const problem = relativePathProblem(p);
    if (problem) ctx.addIssue({ code: "custom", path: [p], message: `path "${p}" ${problem}` });
  }
});

// --- scripted brain --------------------------------------------------------------------

export const ZScriptReply = z.strictObject({
  reply: z.string(),
  /** Files to write (string content) or delete (null) in the workspace before replying. */
  files: ZWorkspaceFiles.optional(),
  /** Pause before each streamed chunk, to look like a model that is thinking. */
  chunkDelayMs: z.number().int().nonnegative().max(600_000).default(0),
});

export const SCRIPT_FAULTS = ["disconnect", "timeout", "rate_limit", "auth", "invalid_json", "oversized", "server_error"] as const;
export type ScriptFault = (typeof SCRIPT_FAULTS)[number];

export const ZScriptFault = z.strictObject({
  fault: z.enum(SCRIPT_FAULTS),
  /** disconnect: how many characters arrive before the connection drops. */
  afterChars: z.number().int().nonnegative().max(MAX_AGENT_OUTPUT_BYTES).optional(),
  /** rate_limit: the wait the "provider" asks for. */
  retryAfterMs: z.number().int().nonnegative().max(3_600_000).optional(),
  /** Replaces the canned error message. */
  message: z.string().min(1).max(2_000).optional(),
});

/**
 * Replies made from the request instead of a script (server/agents/stand-ins.ts), so that a
 * simulated agent keeps its promise on any repository: `task_note` writes a note of what was
 * asked (the only file it touches), `note_review` a valid verdict that says it is canned,
 * `allowlist_test_plan` a plan with a command of the project's allowlist (run for real).
 */
export const STAND_INS = ["task_note", "note_review", "allowlist_test_plan"] as const;
export type StandIn = (typeof STAND_INS)[number];

export const ZScriptStandIn = z.strictObject({
  standIn: z.enum(STAND_INS),
  chunkDelayMs: z.number().int().nonnegative().max(600_000).default(0),
});

export const ZScriptEntry = z.union([ZScriptReply, ZScriptFault, ZScriptStandIn]);
export type ScriptEntry = z.output<typeof ZScriptEntry>;
export type ScriptReply = z.output<typeof ZScriptReply>;
export type ScriptFaultEntry = z.output<typeof ZScriptFault>;
export type ScriptStandInEntry = z.output<typeof ZScriptStandIn>;

export const ZScriptedAgentConfig = ZAgentBase.extend({
  kind: z.literal("scripted"),
  /** Invocation n of a role plays responses[n]; the last entry repeats. */
  responses: z.array(ZScriptEntry).min(1),
  /**
   * Replies by what the step must produce (its output kind: text, build, review_verdict,
   * test_plan, task_spec, execution), used instead of `responses` for such a step (entry n
   * for invocation n, the last repeating): one script then serves any mode and workflow.
   */
  byOutput: z
    .record(z.string().regex(/^[a-z][a-z_]*$/, "an output kind, like text or review_verdict"), z.array(ZScriptEntry).min(1))
    .optional(),
  /**
   * Replies by the stage of a staged workflow (the Forge pipeline), before `byOutput`:
   * entry n for the stage's iteration n + 1, the last repeating. A person's feedback or a
   * critic's revise moves to the next entry, whatever happened in other stages.
   */
  byStage: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/, "a stage name, like prd or coding"), z.array(ZScriptEntry).min(1)).optional(),
}).strict();
export type ScriptedAgentConfig = z.output<typeof ZScriptedAgentConfig>;
export type ScriptedAgentConfigInput = z.input<typeof ZScriptedAgentConfig>;

// --- generic command shell -------------------------------------------------------------

const ZEnvName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "is not a valid environment variable name")
  .refine((name) => !isServerSecret(name), {
    message: `must not be one of the runner's secrets (${SERVER_SECRET_ENV.join(", ")})`,
  });

export const PROMPT_PLACEHOLDER = "{prompt}";

export const ZCommandAgentConfig = ZAgentBase.extend({
  kind: z.literal("command"),
  /** Executable and arguments; run without a shell. */
  argv: z
    .array(z.string().refine((a) => !a.includes("\0"), "must not contain a NUL byte"))
    .min(1)
    .refine((argv) => (argv[0] ?? "") !== "", "the executable (argv[0]) must not be empty"),
  /** stdin: the prompt is written to standard input; arg: it replaces `{prompt}` in argv. */
  prompt: z.enum(["stdin", "arg"]).default("stdin"),
  /** Literal variables for the process. */
  env: z
    .record(
      ZEnvName,
      z.string().refine((v) => !v.includes("\0"), "must not contain a NUL byte"),
    )
    .optional(),
  /** Names of variables passed through from the runner's environment (e.g. a provider key). */
  passEnv: z.array(ZEnvName).optional(),
  /** Per-invocation limit; the request's deadline applies too, whichever comes first. */
  timeoutMs: z.number().int().positive().max(86_400_000).optional(),
  /** Network access in the sandbox: on for a command that calls a model itself (bound to a brain). */
  network: z.boolean().default(false),
})
  .strict()
  .refine((c) => c.prompt !== "arg" || c.argv.slice(1).some((a) => a.includes(PROMPT_PLACEHOLDER)), {
    message: `with prompt "arg", an argument must contain ${PROMPT_PLACEHOLDER}`,
    path: ["argv"],
  });
export type CommandAgentConfig = z.output<typeof ZCommandAgentConfig>;
export type CommandAgentConfigInput = z.input<typeof ZCommandAgentConfig>;

// --- HTTP model brains: OpenAI-compatible chat completions, Anthropic messages ----------

/** Default spacing of calls to one brain, across all runners (req R5). */
export const DEFAULT_BRAIN_MIN_INTERVAL_MS = 2_000;

/** Where the provider listens; never with credentials in it (keys come from apiKeyEnv). */
const ZBrainBaseUrl = z
  .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
  .refine((u) => {
    const url = new URL(u);
    return url.username === "" && url.password === "";
  }, "must not contain credentials: name the variable holding the key in apiKeyEnv")
  .refine((u) => !u.includes("?") && !u.includes("#"), "must not contain a query or fragment")
  .transform((u) => u.replace(/\/+$/, ""));

/** One call (a brain) or one run (an agent CLI) per interval against the provider, across all runners; 0 turns it off. */
const ZRateLimit = z
  .strictObject({ minIntervalMs: z.number().int().nonnegative().max(3_600_000).default(DEFAULT_BRAIN_MIN_INTERVAL_MS) })
  .default({ minIntervalMs: DEFAULT_BRAIN_MIN_INTERVAL_MS });

const ZBrainFields = {
  model: z.string().min(1).max(200),
  /** Name of the environment variable holding the API key, read at each call. */
  apiKeyEnv: ZEnvName.optional(),
  maxTokens: z.number().int().positive().max(1_000_000).optional(),
  systemPrompt: z.string().min(1).max(100_000).optional(),
  /** 0 turns the limit off. */
  rateLimit: ZRateLimit,
};

export const ZOpenAIAgentConfig = ZAgentBase.extend({
  kind: z.literal("openai"),
  /** With or without the trailing /v1 (OpenAI, Ollama, vLLM, llama.cpp server). */
  baseUrl: ZBrainBaseUrl.default("https://api.openai.com/v1"),
  temperature: z.number().min(0).max(2).optional(),
  ...ZBrainFields,
}).strict();
export type OpenAIAgentConfig = z.output<typeof ZOpenAIAgentConfig>;
export type OpenAIAgentConfigInput = z.input<typeof ZOpenAIAgentConfig>;

export const ZAnthropicAgentConfig = ZAgentBase.extend({
  kind: z.literal("anthropic"),
  baseUrl: ZBrainBaseUrl.default("https://api.anthropic.com"),
  temperature: z.number().min(0).max(1).optional(),
  ...ZBrainFields,
}).strict();
export type AnthropicAgentConfig = z.output<typeof ZAnthropicAgentConfig>;
export type AnthropicAgentConfigInput = z.input<typeof ZAnthropicAgentConfig>;

export type BrainAgentConfig = OpenAIAgentConfig | AnthropicAgentConfig;
export type BrainAgentConfigInput = OpenAIAgentConfigInput | AnthropicAgentConfigInput;

// --- agent CLIs: Claude Code, Codex, Gemini CLI (server/agents/shells/) ----------------

const ZCliArg = z.string().refine((a) => !a.includes("\0"), "must not contain a NUL byte");

/**
 * What an agent CLI may be told about its provider and its own behaviour. One definition for
 * every place a CLI shell is written: the project record's agent (below) and a repository's
 * `.catcafe/shells.json` (server/config/schemas.ts), so a setting one accepts the other does too.
 */
export const ZCliProviderFields = {
  model: z.string().min(1).max(200).optional(),
  /** Variable holding the provider key; default the CLI's own (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY). */
  apiKeyEnv: ZEnvName.optional(),
  /** The provider endpoint the CLI talks to (a gateway, a proxy, a local model server)... */
  baseUrl: ZBrainBaseUrl.optional(),
  /** ...or the runner's variable holding it. */
  baseUrlEnv: ZEnvName.optional(),
  /**
   * How often the CLI itself retries a failed provider request. Default 1: one retry, in which
   * the CLI honours the provider's Retry-After; then the runner's retry policy and its shared
   * rate limit govern (each retry is recorded as ProviderRetried). 0: none.
   */
  providerRetries: z.number().int().min(0).max(10).default(1),
  /** Spacing of this agent's runs against its provider, across all runners (as for brains). */
  rateLimit: ZRateLimit,
  /** A fresh HOME per run, so the CLI's own login, settings and history stay out of it. */
  isolateHome: z.boolean().default(true),
};

/** A CLI shell gives its endpoint one way. */
export function oneBaseUrl(c: { baseUrl?: string; baseUrlEnv?: string }): boolean {
  return c.baseUrl === undefined || c.baseUrlEnv === undefined;
}

const ZCliShellFields = {
  ...ZCliProviderFields,
  /** Path or name of the executable; default: the CLI's own name in node_modules/.bin, then PATH. */
  command: ZCliArg.min(1).optional(),
  /** Appended after the arguments the adapter adds for a non-interactive run. */
  extraArgs: z.array(ZCliArg).default([]),
  /** Literal variables for the process (never secrets: name those in passEnv or apiKeyEnv). */
  env: z.record(ZEnvName, ZCliArg).optional(),
  /** More variables passed through from the runner's environment. */
  passEnv: z.array(ZEnvName).optional(),
  /** edit: change files in the workspace without asking; full: also run any command without asking. */
  permissions: z.enum(["edit", "full"]).default("edit"),
  /** Per-invocation limit; the request's deadline applies too, whichever comes first. */
  timeoutMs: z.number().int().positive().max(86_400_000).optional(),
};

const ZCliShellConfig = <K extends "claude" | "codex" | "gemini">(kind: K) =>
  ZAgentBase.extend({ kind: z.literal(kind), ...ZCliShellFields })
    .strict()
    .refine(oneBaseUrl, {
      message: "give baseUrl or baseUrlEnv, not both",
      path: ["baseUrlEnv"],
    });

export const ZClaudeAgentConfig = ZCliShellConfig("claude");
export const ZCodexAgentConfig = ZCliShellConfig("codex");
export const ZGeminiAgentConfig = ZCliShellConfig("gemini");
export type CliShellAgentConfig =
  z.output<typeof ZClaudeAgentConfig> | z.output<typeof ZCodexAgentConfig> | z.output<typeof ZGeminiAgentConfig>;
export type CliShellAgentConfigInput =
  z.input<typeof ZClaudeAgentConfig> | z.input<typeof ZCodexAgentConfig> | z.input<typeof ZGeminiAgentConfig>;

// --- all kinds -------------------------------------------------------------------------

export const ZAgentConfig = z.discriminatedUnion("kind", [
  ZScriptedAgentConfig,
  ZCommandAgentConfig,
  ZOpenAIAgentConfig,
  ZAnthropicAgentConfig,
  ZClaudeAgentConfig,
  ZCodexAgentConfig,
  ZGeminiAgentConfig,
]);
/** A validated agent configuration (defaults applied). */
export type AgentConfig = z.output<typeof ZAgentConfig>;
/** An agent configuration as written in a file or in code (defaults may be left out). */
export type AgentConfigInput = z.input<typeof ZAgentConfig>;
export type AgentKind = AgentConfig["kind"];
