// The configuration files (req M1), one zod schema each, with their
// defaults: the global settings file in the data directory, and per project, in the
// repository's `.catcafe/` directory, shells.json, brains.json, agents.json, runtimes.json,
// projects.json and version.json. Every object is strict: an unknown key is an error (it
// is usually a typo, and silently ignoring it would run something other than intended).
import { z } from "zod";
import { oneBaseUrl, ZCliProviderFields, ZScriptEntry, ZSkills } from "../agents/config";
import { PROVIDER_KEY_ENV } from "../agents/access";
import { ZMcpServers } from "../agents/mcp";
import { isServerSecret, SERVER_SECRET_ENV } from "../process/env";
import { AGENT_ROLES, MAX_AGENT_OUTPUT_BYTES } from "../agents/types";
import { ZAllowlist } from "../commands/allowlist";
import { parseHostRule } from "../net/hosts";
import { globProblem, versionRangeProblem } from "./checks";
import { ZBakeOffStart } from "../events/bake-off-catalog";

/** The configuration format this build writes and reads; any 1.x file is compatible. */
export const CONFIG_VERSION = "1.0";
export const CONFIG_MAJOR = 1;

export const CONFIG_DIR = ".catcafe";
/** The files of `.catcafe/`, in the order they are read and reported. */
export const PROJECT_CONFIG_FILES = [
  "version.json",
  "shells.json",
  "brains.json",
  "agents.json",
  "runtimes.json",
  "projects.json",
] as const;
export type ProjectConfigFile = (typeof PROJECT_CONFIG_FILES)[number];
export const SETTINGS_FILE = "settings.json";

/** What a brain (model) can do; an agent's manifest may require any of them. */
export const BRAIN_CAPABILITIES = [
  "reasoning",
  "code-generation",
  "code-review",
  "planning",
  "testing",
  "long-context",
  "vision",
  "tool-use",
] as const;
/** What a shell (CLI) can do in a workspace. */
export const SHELL_CAPABILITIES = ["edit-files", "run-commands", "repo-context"] as const;
export const CAPABILITIES = [...BRAIN_CAPABILITIES, ...SHELL_CAPABILITIES] as const;
export type Capability = (typeof CAPABILITIES)[number];
export type BrainCapability = (typeof BRAIN_CAPABILITIES)[number];
export type ShellCapability = (typeof SHELL_CAPABILITIES)[number];

export const BUILTIN_FSM_ID = "execution_fsm_v1";

// --- building blocks -------------------------------------------------------------------

export const ZConfigId = z
  .string()
  .min(1, "must not be empty")
  .max(100, "must be at most 100 characters")
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "must use letters, digits, '.', '_' and '-', starting with a letter or digit");

const ZConfigVersion = z.string().regex(/^\d+\.(?:\d+|x)$/, 'must be a version like "1.0"');

/** The NAME of an environment variable (never its value). */
export const ZEnvVarName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be the name of an environment variable (letters, digits and '_')")
  .refine((name) => !isServerSecret(name), {
    message: `must not be one of the runner's own secrets (${SERVER_SECRET_ENV.join(", ")})`,
  });

const ZMillis = (max: number) => z.number().int("must be a whole number of milliseconds").min(0).max(max);
const ZPositiveMillis = (max: number) => z.number().int("must be a whole number of milliseconds").min(1).max(max);
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const ZGlob = z.string().superRefine((glob, ctx) => {
  const problem = globProblem(glob);
  if (problem) ctx.addIssue({ code: "custom", message: `glob "${glob}" ${problem}` });
});

const ZVersionRange = z.string().superRefine((range, ctx) => {
  const problem = versionRangeProblem(range);
  if (problem) ctx.addIssue({ code: "custom", message: `version range ${problem}` });
});

const ZNoNul = z.string().refine((s) => !s.includes("\0"), "must not contain a NUL byte");

/** `$schema` is allowed at the top of every file so editors can offer completion. */
const schemaKey = { $schema: z.string().optional() };

const ZRateLimit = z.strictObject({
  /** At most one call per this many milliseconds per brain (req R5: default one per 2 s). */
  minIntervalMs: ZMillis(HOUR_MS),
});

// --- settings.json (global, in the data directory) -------------------------------------

export const DEFAULT_BACKOFF_MS = [1000, 2000, 4000];

/** The Forge pipeline's defaults: iteration caps per stage, which stages have a person's gate, a budget per session. */
export const ZForgeSettings = z.strictObject({
  caps: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/), z.number().int().min(1).max(20)).optional(),
  /** Stages with a person's gate (default: every gate of the pipeline: idea, prd, design, plan). */
  gates: z.array(z.string().regex(/^[a-z][a-z0-9_]*$/)).optional(),
  budget: z
    .strictObject({
      maxCalls: z.number().int().min(1).max(10_000).optional(),
      maxTokens: z.number().int().min(1).optional(),
      reserveTokensPerCall: z.number().int().min(0).optional(),
      maxWallMs: ZPositiveMillis(7 * DAY_MS).optional(),
    })
    .optional(),
});
export type ForgeSettings = z.output<typeof ZForgeSettings>;

/** A git branch name part: letters, digits and . _ / - (no "..", no leading "-"). */
const ZBranchPart = z
  .string()
  .max(100)
  .regex(/^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]*$/, "letters, digits, '.', '_', '/' and '-' (no '..', not starting with '-')");

/**
 * How an approved session's work leaves its worktree (docs/delivery.md): the branch every session's
 * commits are on, and what Deliver does — push that branch to `remote`, push it and open a
 * pull request (GitHub or GitLab, over their HTTP APIs), or merge it locally into `target`.
 * The token for the push (HTTPS) and the API is read from the environment variable named in
 * `tokenEnv` by the runner that delivers: never stored, never shown.
 */
const deliveryFields = {
  branchPrefix: ZBranchPart,
  method: z.enum(["push", "pull_request", "merge"]),
  /**
   * A git remote of the project repository (its name or URL). Never with credentials in it:
   * the remote is recorded (settings, delivery and push events), the token is not.
   */
  remote: z
    .string()
    .min(1)
    .max(500)
    .refine(
      (remote) => !/^[a-z][a-z0-9+.-]*:\/\/[^/@]*@/i.test(remote) || /^ssh:\/\/[^/:@]+@/i.test(remote),
      "must not carry credentials (user:password@ or token@): name the variable that holds the token in tokenEnv",
    ),
  target: ZBranchPart.min(1),
  tokenEnv: ZEnvVarName,
  /** Approvals by this many different people before a delivery (0: none needed). */
  approvals: z.number().int().min(0).max(10),
  /**
   * Deliver without being asked: when the session is approved, or, with `approvals`, when the
   * last approval needed is given. Off: an operator delivers (Deliver, `catcafe deliver`).
   */
  auto: z.boolean(),
  pullRequest: z.strictObject({
    provider: z.enum(["github", "gitlab"]),
    /** Default: https://api.github.com, https://gitlab.com/api/v4 (Enterprise and self-hosted: yours). */
    apiBaseUrl: z.url().optional(),
    /** GitHub: owner/name; GitLab: the project's path (group/name) or numeric id. */
    repository: z.string().min(1).max(300),
  }),
};
export const ZDeliverySettings = z.strictObject({
  ...deliveryFields,
  branchPrefix: deliveryFields.branchPrefix.default("catcafe/"),
  method: deliveryFields.method.default("merge"),
  remote: deliveryFields.remote.optional(),
  target: deliveryFields.target.default("main"),
  tokenEnv: deliveryFields.tokenEnv.optional(),
  approvals: deliveryFields.approvals.default(0),
  auto: deliveryFields.auto.default(false),
  pullRequest: deliveryFields.pullRequest.optional(),
});
/** An override's delivery settings: only those it names (no defaults filled in, so the level below still applies). */
const ZDeliveryOverride = z.strictObject(deliveryFields).partial();
export type DeliverySettings = z.output<typeof ZDeliverySettings>;

/** A price per million tokens, in the table's currency. */
const ZPerMillion = z.number().nonnegative().max(100_000);

/** What a cached input token costs by default, as a share of the input price (docs/delivery.md, "Usage and cost"). */
export const DEFAULT_CACHE_READ_SHARE = 0.1;
export const DEFAULT_CACHE_WRITE_SHARE = 1.25;

/**
 * What the models cost (docs/delivery.md, "Usage and cost"): per model name — as the brain or CLI is configured with it,
 * or as the CLI reports it — the price of a million input and of a million output tokens, and of a million input
 * tokens read from the provider's prompt cache (default 0.1× input: Anthropic's rate, and OpenAI's for its newer
 * models) and written to it (default 1.25× input: Anthropic's five-minute cache; only Anthropic reports writes).
 * Costs are worked out when they are read, so a corrected price applies to past usage too; a
 * model not in the table has its tokens counted and its cost shown as unknown.
 */
export const ZPricingSettings = z.strictObject({
  /** A label (ISO 4217 code) shown beside the amounts; nothing is converted. */
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, "a three-letter currency code such as USD")
    .default("USD"),
  models: z
    .record(
      z.string().min(1).max(200),
      z.strictObject({
        inputPerMillion: ZPerMillion,
        outputPerMillion: ZPerMillion,
        cacheReadPerMillion: ZPerMillion.optional(),
        cacheWritePerMillion: ZPerMillion.optional(),
      }),
    )
    .default({}),
});
export type PricingSettings = z.output<typeof ZPricingSettings>;

/** A variable name, or a pattern of them with `*` for any run of characters. */
const ZEnvPattern = z
  .string()
  .max(200)
  .regex(/^[A-Za-z_*][A-Za-z0-9_*]*$/, "must be the name of an environment variable, '*' allowed as a wildcard");

const ZHostRuleText = z
  .string()
  .max(300)
  .superRefine((text, ctx) => {
    const rule = parseHostRule(text);
    if ("error" in rule) ctx.addIssue({ code: "custom", message: rule.error });
  });

/**
 * Least privilege for agents and the server's own calls (docs/security.md): which of the
 * runner's variables an agent may receive (passEnv, a brain's or a CLI's apiKeyEnv), which
 * hosts agents may reach besides their provider's and MCP servers', and which hosts on
 * loopback or private addresses webhooks and brains may call. Set by an admin only: a
 * repository's `.catcafe/` can name what is on these lists, never add to them. Each level
 * (settings.json, the server's overrides, a project's) adds to the one below.
 */
const accessLists = {
  agentEnv: z.array(ZEnvPattern).max(100),
  agentHosts: z.array(ZHostRuleText).max(100),
  privateHosts: z.array(ZHostRuleText).max(100),
  /**
   * The variables a delivery's tokenEnv saved in the dashboard or the CLI may name (req X2,
   * docs/delivery.md): an operator picks the token variable from this list, never any of the
   * runner's variables (the token goes to a remote of their choosing). Empty by default.
   */
  deliveryTokenEnv: z.array(ZEnvPattern).max(100),
};
export const ZAccessSettings = z.strictObject({
  agentEnv: accessLists.agentEnv.default([...PROVIDER_KEY_ENV]),
  agentHosts: accessLists.agentHosts.default([]),
  privateHosts: accessLists.privateHosts.default([]),
  deliveryTokenEnv: accessLists.deliveryTokenEnv.default([]),
});
/** An override's lists: only those it names (no defaults filled in). */
const ZAccessOverride = z.strictObject(accessLists).partial();
export type AccessSettings = z.output<typeof ZAccessSettings>;

/**
 * Sessions' upkeep (req F14, docs/operations.md "Cleaning up failed sessions"): the workspaces of
 * sessions that failed more than this many days ago are cleaned up on their own; null: never.
 */
const ZPruneFailedAfterDays = z.number().int().min(1).max(3650).nullable();
const ZSessionsSettings = z.strictObject({ pruneFailedAfterDays: ZPruneFailedAfterDays.default(null) });

/**
 * What every runner host keeps (docs/operations.md, "Worktrees on every host"): a finished
 * session's worktree (whatever its outcome: its work is in its commits and bundles) is removed
 * this many days after it ended, with its pins and local branch; null: kept.
 */
const ZKeepFinishedDays = z.number().int().min(0).max(3650).nullable();
const ZWorkspacesSettings = z.strictObject({ keepFinishedDays: ZKeepFinishedDays.default(7) });

export const ZSettings = z.strictObject({
  ...schemaKey,
  version: ZConfigVersion.default(CONFIG_VERSION),
  /** Used by agents that name no shell / brain of their own. */
  /** null: no default (the same as leaving it out). */
  defaultShell: ZConfigId.nullable().optional(),
  defaultBrain: ZConfigId.nullable().optional(),
  timeouts: z
    .strictObject({
      /** A whole agent step. */
      stepMs: ZPositiveMillis(DAY_MS).default(600_000),
      /** One allowlisted test command (req W8: 30 s). */
      commandMs: ZPositiveMillis(HOUR_MS).default(30_000),
    })
    .prefault({}),
  retry: z
    .strictObject({
      /** Attempts in all, the first included (1 = never retry). */
      maxAttempts: z.number().int().min(1).max(10).default(4),
      /** Waits before the 2nd, 3rd, ... attempt; the last one repeats. */
      backoffMs: z.array(ZMillis(HOUR_MS)).min(1).max(10).default(DEFAULT_BACKOFF_MS),
    })
    .prefault({}),
  rateLimit: z.strictObject({ minIntervalMs: ZMillis(HOUR_MS).default(2000) }).prefault({}),
  forge: ZForgeSettings.prefault({}),
  delivery: ZDeliverySettings.prefault({}),
  pricing: ZPricingSettings.prefault({}),
  access: ZAccessSettings.prefault({}),
  /** MCP servers handed to the agent CLIs that take them (claude, codex, gemini); none by default. */
  mcpServers: ZMcpServers.default([]),
  sessions: ZSessionsSettings.prefault({}),
  workspaces: ZWorkspacesSettings.prefault({}),
});
export type Settings = z.output<typeof ZSettings>;
export type SettingsInput = z.input<typeof ZSettings>;
export const DEFAULT_SETTINGS: Settings = ZSettings.parse({});

/** What one intake trigger starts (docs/intake.md): the workflow, and whether it is confirmed at once. */
const ZIntakeTriggerFields = z.strictObject({
  /** `bake_off`: the review loop's proposal, forked at the person's confirm into `bakeOff`'s contenders (docs/bake-off.md). */
  workflow: z.enum(["review_loop", "forge", "bake_off"]).default("review_loop"),
  autoConfirm: z.boolean().default(false),
  /** The contenders of a `bake_off` trigger, as tasks.start takes them. */
  bakeOff: ZBakeOffStart.optional(),
});
/** A bake-off names its contenders, and waits for a person's confirm: its confirm forks them. */
function bakeOffTrigger(t: { workflow: string; autoConfirm: boolean; bakeOff?: unknown }, ctx: z.RefinementCtx): void {
  if (t.workflow === "bake_off" && !t.bakeOff)
    ctx.addIssue({ code: "custom", path: ["bakeOff"], message: "a bake_off trigger names its contenders (bakeOff.contenders, 2 to 6)" });
  if (t.workflow !== "bake_off" && t.bakeOff)
    ctx.addIssue({ code: "custom", path: ["bakeOff"], message: "contenders are for a bake_off trigger (workflow: bake_off)" });
  if (t.workflow === "bake_off" && t.autoConfirm)
    ctx.addIssue({
      code: "custom",
      path: ["autoConfirm"],
      message: "a bake-off waits for a person's confirm (it forks the contenders): no autoConfirm",
    });
}
const ZIntakeTrigger = ZIntakeTriggerFields.superRefine(bakeOffTrigger);
/**
 * A project's intake from its issue tracker (docs/intake.md): which repository's webhook
 * deliveries are its, and which triggers start a task. A trigger left out starts nothing.
 */
export const ZIntakeSettings = z.strictObject({
  provider: z.enum(["github", "gitlab"]),
  /** `owner/name` on GitHub; the project's path (`group/name`) or numeric id on GitLab. */
  repository: z
    .string()
    .trim()
    .min(1)
    .max(300)
    .regex(/^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)*$/, "owner/name on GitHub, group/project or the project id on GitLab"),
  /** The tracker's API for the write-access check (GitHub Enterprise, a self-hosted GitLab). */
  apiBaseUrl: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .optional(),
  /** The tracker user whose assignment starts a task (the assignment trigger). */
  botUser: z.string().trim().min(1).max(100).optional(),
  /** Tasks intake may start per hour for this project; more wait in the inbox. */
  maxPerHour: z.number().int().min(1).max(1000).default(10),
  triggers: z
    .strictObject({
      label: ZIntakeTriggerFields.extend({ name: z.string().trim().min(1).max(100).default("catcafe") })
        .superRefine(bakeOffTrigger)
        .optional(),
      assignment: ZIntakeTrigger.optional(),
      comment: ZIntakeTrigger.optional(),
    })
    .default({}),
});
export type IntakeSettings = z.output<typeof ZIntakeSettings>;

/**
 * A project's overrides of the global settings (kept in the project record, set by an
 * admin): any of the timeouts, the retry policy and the rate limit, each value optional,
 * with the same ranges as settings.json. What is left out comes from settings.json.
 */
export const ZSettingsOverride = z.strictObject({
  timeouts: z
    .strictObject({ stepMs: ZPositiveMillis(DAY_MS), commandMs: ZPositiveMillis(HOUR_MS) })
    .partial()
    .optional(),
  retry: z
    .strictObject({ maxAttempts: z.number().int().min(1).max(10), backoffMs: z.array(ZMillis(HOUR_MS)).min(1).max(10) })
    .partial()
    .optional(),
  rateLimit: z
    .strictObject({ minIntervalMs: ZMillis(HOUR_MS) })
    .partial()
    .optional(),
  forge: ZForgeSettings.optional(),
  delivery: ZDeliveryOverride.optional(),
  /** Replaces the list of settings.json (an empty list: none for this project). */
  mcpServers: ZMcpServers.optional(),
  /** Adds to the lists below it. */
  access: ZAccessOverride.optional(),
  sessions: z.strictObject({ pruneFailedAfterDays: ZPruneFailedAfterDays }).partial().optional(),
  workspaces: z.strictObject({ keepFinishedDays: ZKeepFinishedDays }).partial().optional(),
  /** A project's intake from its issue tracker (a project's only; docs/intake.md). */
  intake: ZIntakeSettings.optional(),
});
export type SettingsOverride = z.output<typeof ZSettingsOverride>;

/** The settings in force for a project: settings.json with the project's overrides on top. */
export function withOverride(settings: Settings, override: SettingsOverride | undefined): Settings {
  if (!override) return settings;
  return {
    ...settings,
    timeouts: { ...settings.timeouts, ...override.timeouts },
    retry: { ...settings.retry, ...override.retry },
    rateLimit: { ...settings.rateLimit, ...override.rateLimit },
    forge: override.forge
      ? { ...settings.forge, ...override.forge, caps: { ...settings.forge.caps, ...override.forge.caps } }
      : settings.forge,
    delivery: { ...settings.delivery, ...override.delivery },
    mcpServers: override.mcpServers ?? settings.mcpServers,
    sessions: { ...settings.sessions, ...override.sessions },
    workspaces: { ...settings.workspaces, ...override.workspaces },
    access: {
      agentEnv: union(settings.access.agentEnv, override.access?.agentEnv),
      agentHosts: union(settings.access.agentHosts, override.access?.agentHosts),
      privateHosts: union(settings.access.privateHosts, override.access?.privateHosts),
      deliveryTokenEnv: union(settings.access.deliveryTokenEnv, override.access?.deliveryTokenEnv),
    },
  };
}

function union(below: readonly string[], added: readonly string[] | undefined): string[] {
  return [...new Set([...below, ...(added ?? [])])];
}

// --- version.json -----------------------------------------------------------------------

export const ZVersionFile = z.strictObject({ ...schemaKey, configVersion: ZConfigVersion });

// --- shells.json ------------------------------------------------------------------------

const shellCommon = {
  description: z.string().max(1000).optional(),
  /** Executable name (looked up on PATH) or path; defaults to the CLI's usual name. */
  command: ZNoNul.min(1, "must not be empty").optional(),
  /** Extra arguments, after the ones the shell adapter adds for non-interactive use. */
  args: z.array(ZNoNul).default([]),
  /** Versions this configuration is known to work with (npm syntax: ">=1.0.0 <2"). */
  versionRange: ZVersionRange.optional(),
  /** Literal variables for the process (never secrets: use passEnv). */
  env: z.record(ZEnvVarName, ZNoNul).optional(),
  /** Variables passed through from the runner's environment. */
  passEnv: z.array(ZEnvVarName).default([]),
  timeoutMs: ZPositiveMillis(DAY_MS).optional(),
  /** False for a CLI that needs a terminal: such a shell cannot be bound to a run. */
  nonInteractive: z.boolean().default(true),
  capabilities: z.array(z.enum(CAPABILITIES)).optional(),
};

const ZCliShell = (kind: "claude" | "codex" | "gemini") =>
  z
    .strictObject({
      kind: z.literal(kind),
      ...shellCommon,
      /** edit: change files without asking; full: also run any command without asking. */
      permissions: z.enum(["edit", "full"]).optional(),
      // The same provider settings as a CLI agent in the project record (one definition). A
      // bound brain's model, endpoint and key variable come first; these fill in (a gemini
      // shell takes no brain, so its endpoint and key are set here).
      ...ZCliProviderFields,
    })
    .refine(oneBaseUrl, { message: "give baseUrl or baseUrlEnv, not both", path: ["baseUrlEnv"] });

export const PROMPT_PLACEHOLDER = "{prompt}";

export const ZCommandShell = z
  .strictObject({
    kind: z.literal("command"),
    ...shellCommon,
    command: ZNoNul.min(1, "must not be empty"),
    /** stdin: the prompt is written to standard input; arg: it replaces {prompt} in args. */
    prompt: z.enum(["stdin", "arg"]).default("stdin"),
    /** Network access in the sandbox (on anyway when the shell is bound to a brain it calls). */
    network: z.boolean().default(false),
  })
  .superRefine((shell, ctx) => {
    if (shell.prompt === "arg" && !shell.args.some((a) => a.includes(PROMPT_PLACEHOLDER))) {
      ctx.addIssue({ code: "custom", path: ["args"], message: `with prompt "arg", an argument must contain ${PROMPT_PLACEHOLDER}` });
    }
  });

export const SHELL_KINDS = ["claude", "codex", "gemini", "command"] as const;
export type ShellKind = (typeof SHELL_KINDS)[number];
export const ZShell = z.discriminatedUnion("kind", [ZCliShell("claude"), ZCliShell("codex"), ZCliShell("gemini"), ZCommandShell]);
export type ShellInput = z.input<typeof ZShell>;
export type ShellParsed = z.output<typeof ZShell>;

export const ZShellsFile = z.strictObject({ ...schemaKey, shells: z.record(ZConfigId, ZShell) });

// --- brains.json ------------------------------------------------------------------------

const brainCommon = {
  description: z.string().max(1000).optional(),
  maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  rateLimit: ZRateLimit.optional(),
  /** What this model is good for; defaults from the model name (claude-*, gpt-*, ...). */
  capabilities: z.array(z.enum(BRAIN_CAPABILITIES)).optional(),
};

const httpBrain = {
  model: z.string().min(1, "must not be empty").max(200),
  baseUrl: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
  /** Alias of baseUrl (the word the original configuration format used). */
  endpoint: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
  apiKeyEnv: ZEnvVarName.optional(),
};

const noBothUrls = (brain: { baseUrl?: string | undefined; endpoint?: string | undefined }, ctx: z.RefinementCtx) => {
  if (brain.baseUrl !== undefined && brain.endpoint !== undefined) {
    ctx.addIssue({ code: "custom", path: ["endpoint"], message: "give either baseUrl or endpoint, not both" });
  }
};

export const ZOpenAIBrain = z
  .strictObject({ provider: z.literal("openai"), ...brainCommon, ...httpBrain, temperature: z.number().min(0).max(2).optional() })
  .superRefine(noBothUrls);
export const ZAnthropicBrain = z
  .strictObject({ provider: z.literal("anthropic"), ...brainCommon, ...httpBrain, temperature: z.number().min(0).max(1).optional() })
  .superRefine(noBothUrls);
export const ZScriptedBrain = z.strictObject({
  provider: z.literal("scripted"),
  ...brainCommon,
  model: z.string().min(1).max(200).default("scripted"),
  temperature: z.number().min(0).max(2).optional(),
  /** The replies (and faults) the simulated brain plays, in order; the last one repeats. */
  responses: z.array(ZScriptEntry).min(1, "needs at least one response"),
});

export const BRAIN_PROVIDERS = ["openai", "anthropic", "scripted"] as const;
export type BrainProvider = (typeof BRAIN_PROVIDERS)[number];
export const ZBrain = z.discriminatedUnion("provider", [ZOpenAIBrain, ZAnthropicBrain, ZScriptedBrain]);
export type BrainParsed = z.output<typeof ZBrain>;

export const ZBrainsFile = z.strictObject({ ...schemaKey, brains: z.record(ZConfigId, ZBrain) });

// --- agents.json ------------------------------------------------------------------------

export const OUTPUT_FORMATS = ["text", "json", "any"] as const;

export const ZAgentManifestConfig = z.strictObject({
  /** What the agent needs from its brain and shell. */
  capabilities: z.array(z.enum(CAPABILITIES)).default([]),
  /** Globs of the files the agent may change; changes elsewhere are rejected. */
  allowedFiles: z.array(ZGlob).min(1, "list at least one glob, or leave allowedFiles out").optional(),
  input: z.strictObject({ maxPromptChars: z.number().int().min(1).max(1_000_000).optional() }).optional(),
  output: z
    .strictObject({
      /** json: the agent can only answer steps that need strict JSON; text: only prose. */
      format: z.enum(OUTPUT_FORMATS).default("any"),
      maxBytes: z.number().int().min(1).max(MAX_AGENT_OUTPUT_BYTES).optional(),
    })
    .optional(),
});

export const ZAgentDefinition = z.strictObject({
  id: ZConfigId,
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(2000).optional(),
  role: z.enum(AGENT_ROLES),
  manifest: ZAgentManifestConfig.prefault({}),
  /** A shell from shells.json; null: no shell (a brain called over HTTP). Default: settings. */
  defaultShell: ZConfigId.nullable().optional(),
  /** A brain from brains.json; null: no brain (a gemini shell, a command). Default: settings. */
  defaultBrain: ZConfigId.nullable().optional(),
  /** Among agents of one role, the highest priority runs (ties: first in the file). */
  priority: z.number().int().min(-1000).max(1000).default(0),
  /** Skill tags, for a conversation's expert routing. */
  skills: ZSkills.default([]),
  /** The execution FSM the agent's runs follow (runtimes.json or built in). */
  fsm: ZConfigId.default(BUILTIN_FSM_ID),
});
export type AgentDefinition = z.output<typeof ZAgentDefinition>;

export const ZAgentsFile = z.strictObject({ ...schemaKey, agents: z.array(ZAgentDefinition) });

// --- runtimes.json ----------------------------------------------------------------------

const ZFsmStateName = z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, "state names use letters, digits and '_'");
const ZFsmEventName = z.string().regex(/^[a-z][a-z0-9_]*$/, "event names are lower_snake_case");

export const ZFsmTransition = z.union([
  ZFsmStateName.transform((target) => ({ target, emit: [] as string[] })),
  z.strictObject({ target: ZFsmStateName, emit: z.array(ZFsmEventName).default([]) }),
]);

export const ZFsmState = z.strictObject({
  description: z.string().max(1000).optional(),
  terminal: z.boolean().default(false),
  /** event → next state (or {target, emit: [events announced on the way]}). */
  on: z.record(ZFsmEventName, ZFsmTransition).default({}),
});

export const ZFsmDefinition = z.strictObject({
  description: z.string().max(1000).optional(),
  initial: ZFsmStateName,
  states: z.record(ZFsmStateName, ZFsmState),
});
export type FsmDefinition = z.output<typeof ZFsmDefinition>;

export const ZRuntimesFile = z.strictObject({
  ...schemaKey,
  fsms: z.record(ZConfigId, ZFsmDefinition).default({}),
  /** User-defined workflows (req M9), checked by the workflow loader. */
  workflows: z.record(z.string(), z.unknown()).default({}),
});

// --- projects.json ----------------------------------------------------------------------

export const ZProjectsFile = z.strictObject({
  ...schemaKey,
  name: z.string().min(1).max(200).optional(),
  /** Narrows the admin's allowlist for this repository (it can never widen it). */
  allowlist: ZAllowlist.optional(),
  maxIterations: z.number().int().min(1).max(20).optional(),
  /** null: no default (the same as leaving it out). */
  defaultShell: ZConfigId.nullable().optional(),
  defaultBrain: ZConfigId.nullable().optional(),
  workflow: z
    .strictObject({
      default: z.string().min(1).optional(),
      mode: z.enum(["proposal", "implementation"]).optional(),
    })
    .optional(),
});
export type ProjectSettings = z.output<typeof ZProjectsFile>;
