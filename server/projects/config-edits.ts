// Configuration edited in the dashboard, the CLI or the API, as events: a project's record
// (iteration cap, settings overrides, its agents per role, its delivery) and the server's
// settings overrides, which sit between settings.json and each project's. Admins edit all of
// it; a project's operators its agents and delivery (req X2, ./edit-rights.ts). Every save is
// validated with the schemas the files use, with the same messages, and appends what changed
// (path, before, after) with who did it — in the transaction that writes the record — so
// the history is complete and any change can be reverted. The repository's `.catcafe/`
// stays the source of what it defines; nothing here writes to it.
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { zodIssuesToConfigErrors } from "../config/issues";
import {
  DEFAULT_SETTINGS,
  withOverride,
  ZSettingsOverride,
  type AccessSettings,
  type Settings,
  type SettingsOverride,
} from "../config/schemas";
import { loadSettings, webSettingsPath } from "../config/settings";
import { withTransaction, type Db, type Queryable } from "../db/pool";
import { AppError } from "../errors";
import type { Actor, AppEventOf } from "../events/catalog";
import type { EventStore } from "../events/store";
import { ZEventVersion, ZVersion } from "../events/versions";
import { savedUrlProblem } from "../net/outbound";
import { getProject, maskedUrl, upsertProject, ZProjectInput, ZWebhook, type Project } from "./projects";
import { ZAgentRole } from "../agents/types";
import { deliveryTokenProblem } from "../config/delivery-token";
import { assertMayChange, type EditorRole } from "./edit-rights";
import { agentProblems, withAgentChanges } from "./roles";
import { isObject, readConfigStream, SERVER_CONFIG_STREAM, serverOverride, setAtPath } from "../config/overrides";

export { SERVER_CONFIG_STREAM, serverOverride, setAtPath };

export const projectConfigStream = (projectId: string) => `config-project-${projectId}`;

type Path = Array<string | number>;
export type ConfigChange = AppEventOf<"ConfigChanged">["data"]["changes"][number];

/** The settings fields a form edits, each a path in a settings override. */
export const SETTINGS_FIELDS = {
  stepTimeoutMs: ["timeouts", "stepMs"],
  commandTimeoutMs: ["timeouts", "commandMs"],
  maxAttempts: ["retry", "maxAttempts"],
  backoffMs: ["retry", "backoffMs"],
  rateLimitMs: ["rateLimit", "minIntervalMs"],
  // Each level adds to the lists below it (docs/security.md).
  agentEnv: ["access", "agentEnv"],
  agentHosts: ["access", "agentHosts"],
  privateHosts: ["access", "privateHosts"],
  /** The variables a delivery's tokenEnv may name (an admin's list, like the three above). */
  deliveryTokenEnvAllowed: ["access", "deliveryTokenEnv"],
  // A project's delivery (docs/delivery.md): an operator's to set (req X2, docs/auth.md).
  deliveryMethod: ["delivery", "method"],
  deliveryRemote: ["delivery", "remote"],
  deliveryTarget: ["delivery", "target"],
  deliveryTokenEnv: ["delivery", "tokenEnv"],
  deliveryPullRequest: ["delivery", "pullRequest"],
  // Sessions' upkeep (req F14, docs/operations.md): an admin's, like every field but agents and delivery.
  pruneFailedAfterDays: ["sessions", "pruneFailedAfterDays"],
  keepFinishedDays: ["workspaces", "keepFinishedDays"],
} as const satisfies Record<string, readonly [string, string]>;
export type SettingsField = keyof typeof SETTINGS_FIELDS;

/**
 * A form's values, loosely typed on purpose: the configuration schemas judge them, so a bad
 * value gets the message a file would. `null` clears an override (the value is inherited);
 * left out, it stays as it is.
 */
const ZLooseNumber = z.number().nullable().optional();
const ZSettingsFields = z.object({
  stepTimeoutMs: ZLooseNumber,
  commandTimeoutMs: ZLooseNumber,
  maxAttempts: ZLooseNumber,
  backoffMs: z.array(z.number()).nullable().optional(),
  rateLimitMs: ZLooseNumber,
  agentEnv: z.array(z.string()).nullable().optional(),
  agentHosts: z.array(z.string()).nullable().optional(),
  privateHosts: z.array(z.string()).nullable().optional(),
  deliveryTokenEnvAllowed: z.array(z.string()).nullable().optional(),
  deliveryMethod: z.string().nullable().optional(),
  deliveryRemote: z.string().nullable().optional(),
  deliveryTarget: z.string().nullable().optional(),
  deliveryTokenEnv: z.string().nullable().optional(),
  deliveryPullRequest: z.record(z.string(), z.unknown()).nullable().optional(),
  pruneFailedAfterDays: ZLooseNumber,
  keepFinishedDays: ZLooseNumber,
});
/** The version of the configuration the form was filled from: a save over a newer one is refused. */
const ZExpectedVersion = { expectedVersion: ZVersion.optional() };
export const ZConfigureServerInput = ZSettingsFields.extend(ZExpectedVersion);
export const ZConfigureProjectInput = ZSettingsFields.extend({
  ...ZExpectedVersion,
  projectId: z.string().min(1).max(100),
  maxIterations: z.number().optional(),
  /** role → the model of the project record's agent for that role. */
  models: z.record(z.string(), z.string()).optional(),
  /**
   * role → the project record's agent for that role, whole (as ZAgentConfig accepts it; judged
   * there, with the access rules in force); null unbinds the role. Roles left out stay.
   */
  agents: z.partialRecord(ZAgentRole, z.record(z.string(), z.unknown()).nullable()).optional(),
  /** A new webhook URL (null removes the webhook; left out, it stays). */
  webhookUrl: z.string().max(2000).nullable().optional(),
  webhookFormat: z.enum(["json", "slack"]).optional(),
  /** The project's intake rules, whole (judged by ZIntakeSettings; docs/intake.md); null removes them. */
  intake: z.record(z.string(), z.unknown()).nullable().optional(),
});
export type TConfigureProjectInput = z.input<typeof ZConfigureProjectInput>;
export type TConfigureServerInput = z.input<typeof ZConfigureServerInput>;

export const ZRevertInput = z.object({
  scope: z.enum(["project", "server"]),
  projectId: z.string().min(1).max(100).optional(),
  /** The stream version of the change to undo. */
  version: ZEventVersion,
});

// --- documents and their differences --------------------------------------------------

/** Every leaf that differs between two JSON documents (arrays are leaves), with its path. */
export function diffDocuments(before: unknown, after: unknown, path: Path = []): ConfigChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => diffDocuments(before[k], after[k], [...path, k]));
  }
  if (isDeepStrictEqual(before, after)) return [];
  const json = (v: unknown) => v as ConfigChange["to"];
  return [{ path, ...(before === undefined ? {} : { from: json(before) }), ...(after === undefined ? {} : { to: json(after) }) }];
}

export function valueAtPath(doc: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((v, k) => (isObject(v) || Array.isArray(v) ? (v as Record<string, unknown>)[k] : undefined), doc);
}

/** Field values onto a settings override: a number sets, null clears, absent keeps. */
function applySettingsFields(override: SettingsOverride, fields: z.infer<typeof ZSettingsFields>): Record<string, unknown> {
  let next: Record<string, unknown> = { ...override };
  for (const [field, path] of Object.entries(SETTINGS_FIELDS)) {
    const value = fields[field as SettingsField];
    if (value !== undefined) next = setAtPath(next, path, value ?? undefined);
  }
  return next;
}

/** The form field a settings path belongs to (for messages shown beside it). */
function fieldOf(path: string): SettingsField | "intake" | null {
  if (path === "intake" || path.startsWith("intake.")) return "intake";
  const entry = Object.entries(SETTINGS_FIELDS).find(
    ([, p]) => path === p.join(".") || path.startsWith(`${p.join(".")}[`) || path.startsWith(`${p.join(".")}.`),
  );
  return entry ? (entry[0] as SettingsField) : null;
}

/** Problems as a bad request whose field errors sit beside the form's fields, worded as the files' are. */
function invalid(problems: Array<{ field: string; path: string; message: string }>): AppError {
  const fieldErrors: Record<string, string[]> = {};
  for (const p of problems) (fieldErrors[p.field] ??= []).push(`${p.path}: ${p.message}`);
  const lines = problems.map((p) => `${p.path}: ${p.message}`);
  return new AppError("INVALID_INPUT", `invalid configuration: ${lines.join("; ")}`, { fieldErrors });
}

function checkOverride(label: string, doc: unknown, prefix: string, extra: Array<{ field: string; path: string; message: string }> = []) {
  const parsed = ZSettingsOverride.safeParse(doc);
  const problems = parsed.success
    ? []
    : zodIssuesToConfigErrors(label, parsed.error, doc, ZSettingsOverride).map((e) => ({
        field: fieldOf(e.path) ?? "settings",
        path: `${prefix}${e.path}`,
        message: e.message,
      }));
  if (problems.length || extra.length) throw invalid([...problems, ...extra]);
  return parsed.data!;
}

// --- the server's overrides --------------------------------------------------------------

interface Deps {
  store: EventStore;
  pool: Db;
}

/** A form filled from an older version would undo what was saved since: refused, to be reloaded. */
function requireVersion(what: string, expected: number | undefined, current: number): void {
  if (expected !== undefined && expected !== current)
    throw new AppError(
      "CONFLICT",
      `${what} changed since you opened them (now at #${current}, your form is from #${expected}): reload and save again`,
    );
}

async function saveServerOverride(
  deps: Deps,
  next: unknown,
  actor: Actor,
  options: { revertOf?: number; expectedVersion?: number } = {},
): Promise<{ version: number; changes: ConfigChange[] }> {
  const { override, version } = await serverOverride(deps.store);
  requireVersion("the server settings", options.expectedVersion, version);
  const revertOf = options.revertOf;
  const checked = checkOverride("server settings", next, "");
  const changes = diffDocuments(override, checked);
  const tokenProblems = tokenEnvProblems(changes, withOverride(fileSettings(), checked), "");
  if (tokenProblems.length) throw invalid(tokenProblems);
  if (!changes.length) return { version, changes };
  const result = await deps.store.append(
    SERVER_CONFIG_STREAM,
    version === 0 ? "no_stream" : version,
    [{ type: "ConfigChanged", data: { scope: "server", projectId: null, changes, ...(revertOf ? { revertOf } : {}) } }],
    { actor },
    { streamType: "config" },
  );
  return { version: result.version, changes };
}

export async function configureServer(deps: Deps, raw: TConfigureServerInput, actor: Actor) {
  const fields = ZConfigureServerInput.parse(raw);
  const { override } = await serverOverride(deps.store);
  return saveServerOverride(deps, applySettingsFields(override, fields), actor, { expectedVersion: fields.expectedVersion });
}

// --- a project's record ------------------------------------------------------------------

/** What of a project record is configuration history (everything but its id). */
function recordDocument(p: Project): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify({
      name: p.name,
      repoPath: p.repoPath,
      allowlist: p.allowlist,
      agents: p.agents,
      maxIterations: p.maxIterations,
      settings: p.settings,
      // Only the origin: a webhook URL's path may hold its token, and the history is for operators to read.
      webhook: p.webhook ? { ...p.webhook, url: maskedUrl(p.webhook.url) } : null,
    }),
  ) as Record<string, unknown>;
}

/**
 * Writes a project record and its history entry together. The append with the stream's
 * version comes first (the transaction's first write), so two admins saving at once cannot
 * both win: the second gets CONFLICT, and saves again on what the first wrote.
 */
async function saveProject(
  deps: Deps,
  before: Project | null,
  next: Record<string, unknown> & { id: string },
  actor: Actor,
  options: { revertOf?: number; expectedVersion?: number; role?: EditorRole } = {},
): Promise<{ version: number; changes: ConfigChange[] }> {
  const stream = projectConfigStream(next.id);
  const version = (await deps.store.streamVersion(stream)) ?? 0;
  requireVersion(`the settings of project ${next.id}`, options.expectedVersion, version);
  const revertOf = options.revertOf;
  // Checked as a registration is (defaults applied); the agents are kept as written, as upsertProject stores them.
  const parsed = ZProjectInput.parse(next);
  const after = recordDocument({ ...parsed, agents: next.agents as Record<string, unknown> });
  // The same webhook origin with a new path (a new token) is a change too.
  if (
    before?.webhook &&
    parsed.webhook &&
    before.webhook.url !== parsed.webhook.url &&
    maskedUrl(before.webhook.url) === maskedUrl(parsed.webhook.url)
  )
    (after.webhook as { url: string }).url = `${maskedUrl(parsed.webhook.url)} (new)`;
  const changes = diffDocuments(before ? recordDocument(before) : {}, after);
  if (!changes.length) return { version, changes };
  assertMayChange(options.role ?? "admin", changes, { projectId: next.id, creating: before === null });
  const tokenProblems = tokenEnvProblems(
    changes,
    withOverride(withOverride(fileSettings(), (await serverOverride(deps.store)).override), parsed.settings),
    "settings.",
  );
  if (tokenProblems.length) throw invalid(tokenProblems);
  return withTransaction(deps.pool, async (tx) => {
    const data = { scope: "project" as const, projectId: next.id, changes, ...(revertOf ? { revertOf } : {}) };
    const result = await deps.store.appendInTx(
      tx,
      stream,
      version === 0 ? "no_stream" : version,
      [{ type: "ConfigChanged", data }],
      { actor },
      { streamType: "config" },
    );
    await upsertProject(tx, next as Parameters<typeof upsertProject>[1]);
    return { version: result.version, changes };
  });
}

/** projects.upsert: registers or replaces a project, its history recorded like any edit. */
export async function registerProject(deps: Deps, input: z.input<typeof ZProjectInput>, actor: Actor, options: { role?: EditorRole } = {}) {
  const parsed = ZProjectInput.parse(input);
  const before = await getProject(deps.pool, parsed.id).catch((err: unknown) => {
    if (err instanceof AppError && err.code === "NOT_FOUND") return null;
    throw err;
  });
  const next = { ...parsed, agents: input.agents as Record<string, unknown> };
  const problems = await outboundProblems(deps, before, next);
  if (problems.length) throw invalid(problems.map((p) => ({ ...p, field: p.path.split(".")[0]! })));
  return saveProject(deps, before, next, actor, options);
}

/**
 * A delivery tokenEnv a save sets must be on the admin's list in force with it
 * (access.deliveryTokenEnv, docs/delivery.md "Token"); one kept as it was is not judged again.
 */
function tokenEnvProblems(changes: ConfigChange[], inForce: Settings, prefix: string) {
  const path = `${prefix}delivery.tokenEnv`;
  const changed = changes.some((c) => {
    const p = c.path.join(".");
    return p === path || path.startsWith(`${p}.`);
  });
  const name = inForce.delivery.tokenEnv;
  if (!changed || !name) return [];
  const problem = deliveryTokenProblem(name, inForce.access.deliveryTokenEnv);
  return problem ? [{ field: "deliveryTokenEnv", path, message: problem }] : [];
}

/** An HTTP brain of a project record that names its endpoint (one that names none calls its provider's). */
const ZBrainBaseUrl = z.object({ kind: z.enum(["openai", "anthropic"]), baseUrl: z.string() });

/**
 * The URLs a save sets that the server's own calls would refuse (docs/configuration.md,
 * "Outbound calls"): a new webhook URL, or an HTTP brain's new baseUrl, whose host is a
 * non-public address (or resolves to one here) that access.privateHosts — in force with the
 * override being saved — does not allow. URLs kept as they were are not judged again; each
 * call checks its own.
 */
async function outboundProblems(
  deps: Deps,
  before: Project | null,
  next: Pick<Project, "webhook" | "agents" | "settings">,
): Promise<Array<{ path: string; message: string }>> {
  const urls: Array<{ path: string; url: string }> = [];
  // The delivery's remote (an http(s) URL) and its pull requests' API: called with its token.
  const remote = next.settings.delivery?.remote;
  if (remote && /^https?:\/\//.test(remote) && remote !== before?.settings.delivery?.remote)
    urls.push({ path: "settings.delivery.remote", url: remote });
  const api = next.settings.delivery?.pullRequest?.apiBaseUrl;
  if (api && api !== before?.settings.delivery?.pullRequest?.apiBaseUrl)
    urls.push({ path: "settings.delivery.pullRequest.apiBaseUrl", url: api });
  const intakeApi = next.settings.intake?.apiBaseUrl;
  if (intakeApi && intakeApi !== before?.settings.intake?.apiBaseUrl) urls.push({ path: "settings.intake.apiBaseUrl", url: intakeApi });
  if (next.webhook && next.webhook.url !== before?.webhook?.url) urls.push({ path: "webhook.url", url: next.webhook.url });
  for (const [role, agent] of Object.entries(next.agents)) {
    const baseUrl = ZBrainBaseUrl.safeParse(agent).data?.baseUrl;
    if (baseUrl !== undefined && baseUrl !== ZBrainBaseUrl.safeParse(before?.agents[role]).data?.baseUrl)
      urls.push({ path: `agents.${role}.baseUrl`, url: baseUrl });
  }
  if (!urls.length) return [];
  const { privateHosts } = await accessInForce(deps.store, next.settings, { settingsFile: webSettingsPath() });
  const problems = await Promise.all(
    urls.map(async ({ path, url }) => {
      const problem = await savedUrlProblem(url, { privateHosts });
      return problem ? [{ path, message: problem }] : [];
    }),
  );
  return problems.flat();
}

/** The dashboard's project forms and `catcafe projects agent|delivery`: iteration cap, settings overrides, its agents and their models. */
export async function configureProject(deps: Deps, raw: TConfigureProjectInput, actor: Actor, options: { role?: EditorRole } = {}) {
  const input = ZConfigureProjectInput.parse(raw);
  const project = await getProject(deps.pool, input.projectId);
  const fields = applySettingsFields(project.settings, input);
  const next = input.intake === undefined ? fields : setAtPath(fields, ["intake"], input.intake ?? undefined);
  // A role's new agent is judged with the access rules in force with this save's settings.
  const parsedNext = ZSettingsOverride.safeParse(next);
  const inForce = withOverride(
    withOverride(fileSettings(), (await serverOverride(deps.store)).override),
    parsedNext.success ? parsedNext.data : project.settings,
  );
  const settings = checkOverride(`project ${project.id}`, next, "settings.", [
    ...iterationProblems(input.maxIterations),
    ...modelProblems(project, input.models ?? {}),
    ...Object.entries(input.agents ?? {}).flatMap(([role, agent]) => (agent ? agentProblems(role, agent, inForce) : [])),
  ]);
  const agents = withAgentChanges(project.agents, input.agents ?? {});
  for (const [role, model] of Object.entries(input.models ?? {})) {
    // An agent CLI left without a model runs with its own default.
    const { model: _old, ...agent } = agents[role] as Record<string, unknown>;
    agents[role] = model.trim() || !CLI_KINDS.includes(String(agent.kind)) ? { ...agent, model: model.trim() } : agent;
  }
  const webhook = nextWebhook(project, input);
  const problems = await outboundProblems(deps, project, { webhook, agents, settings });
  if (problems.length) throw invalid(problems.map((p) => ({ ...p, field: outboundField(p.path) })));
  return saveProject(
    deps,
    project,
    { ...project, agents, settings, webhook, maxIterations: input.maxIterations ?? project.maxIterations },
    actor,
    {
      expectedVersion: input.expectedVersion,
      ...(options.role ? { role: options.role } : {}),
    },
  );
}

/** The form field a refused URL belongs to. */
function outboundField(path: string): string {
  if (path.startsWith("agents.")) return path.split(".").slice(0, 2).join(".");
  if (path === "settings.delivery.remote") return "deliveryRemote";
  if (path.startsWith("settings.delivery.pullRequest")) return "deliveryPullRequest";
  if (path.startsWith("settings.intake")) return "intake";
  return "webhookUrl";
}

/** The webhook after a save: a new URL (checked), another format, removed (null), or as it was. */
function nextWebhook(project: Project, input: z.infer<typeof ZConfigureProjectInput>): Project["webhook"] {
  if (input.webhookUrl === null) return null;
  const url = input.webhookUrl?.trim() || project.webhook?.url;
  if (!url) {
    if (input.webhookFormat && input.webhookFormat !== "json")
      throw invalid([{ field: "webhookUrl", path: "webhook.url", message: "set a URL for the webhook first" }]);
    return null;
  }
  const parsed = ZWebhook.safeParse({ url, format: input.webhookFormat ?? project.webhook?.format ?? "json" });
  if (!parsed.success) throw invalid([{ field: "webhookUrl", path: "webhook.url", message: parsed.error.issues[0]?.message ?? "invalid" }]);
  return parsed.data;
}

function iterationProblems(value: number | undefined) {
  if (value === undefined) return [];
  const parsed = ZProjectInput.shape.maxIterations.safeParse(value);
  if (parsed.success) return [];
  const [error] = zodIssuesToConfigErrors("project", parsed.error, value, ZProjectInput.shape.maxIterations);
  return [{ field: "maxIterations", path: "maxIterations", message: error?.message ?? "invalid" }];
}

/** Agent CLIs: a model is theirs to default. */
const CLI_KINDS = ["claude", "codex", "gemini"];

/** A model may be set only on an agent that names one (HTTP brains and agent CLIs). */
function modelProblems(project: Project, models: Record<string, string>) {
  return Object.entries(models).flatMap(([role, model]) => {
    const agent = project.agents[role] as { kind?: string; model?: unknown } | undefined;
    const path = `agents.${role}.model`;
    const field = `models.${role}`;
    if (!agent) return [{ field, path, message: `project ${project.id} has no agent for the ${role} role` }];
    if (!["openai", "anthropic", "claude", "codex", "gemini"].includes(agent.kind ?? ""))
      return [{ field, path, message: `a ${agent.kind} agent has no model to set` }];
    if (!model.trim() && CLI_KINDS.includes(agent.kind ?? "")) return [];
    if (!model.trim()) return [{ field, path, message: "must name a model (e.g. gpt-5, claude-sonnet-4-5)" }];
    if (model.length > 200 || /\s/.test(model.trim()))
      return [{ field, path, message: "a model id is one word of at most 200 characters" }];
    return [];
  });
}

// --- history and revert ------------------------------------------------------------------

export interface ConfigHistoryEntry {
  version: number;
  at: string;
  actor: Actor;
  changes: ConfigChange[];
  revertOf: number | null;
}

export async function configHistory(store: EventStore, stream: string): Promise<ConfigHistoryEntry[]> {
  const events = await readConfigStream(store, stream);
  return events
    .filter((e) => e.type === "ConfigChanged")
    .map((e) => {
      const data = e.data as AppEventOf<"ConfigChanged">["data"];
      return {
        version: e.version,
        at: e.recordedAt,
        actor: e.metadata.actor as Actor,
        changes: data.changes,
        revertOf: data.revertOf ?? null,
      };
    })
    .reverse();
}

/**
 * Undoes one recorded change: each of its paths goes back to the value before it, provided
 * nothing changed that path since (else CONFLICT, naming it). The revert is a change too.
 */
export async function revertChange(deps: Deps, raw: z.input<typeof ZRevertInput>, actor: Actor, options: { role?: EditorRole } = {}) {
  const input = ZRevertInput.parse(raw);
  const role = options.role ?? "admin";
  if (input.scope === "server" && role !== "admin")
    throw new AppError("FORBIDDEN", "only an admin changes the server's settings (docs/auth.md): an operator reverts a project's changes");
  if (input.scope === "project" && !input.projectId) throw new AppError("INVALID_INPUT", "a project change is reverted with its projectId");
  const stream = input.scope === "server" ? SERVER_CONFIG_STREAM : projectConfigStream(input.projectId!);
  const [event] = await readConfigStream(deps.store, stream, { fromVersion: input.version, toVersion: input.version });
  if (event?.type !== "ConfigChanged") throw new AppError("NOT_FOUND", `no configuration change #${input.version} in ${stream}`);
  const { changes } = event.data as AppEventOf<"ConfigChanged">["data"];
  if (changes.some((c) => c.path[0] === "webhook"))
    throw new AppError(
      "PRECONDITION_FAILED",
      `change #${input.version} set the webhook, whose URL the history does not keep (it may hold a token): set the webhook again instead`,
    );
  const project = input.scope === "project" ? await getProject(deps.pool, input.projectId!) : null;
  // Compared as the history recorded it; changed on the record itself (whose webhook URL is whole).
  const current: unknown = project ? recordDocument(project) : (await serverOverride(deps.store)).override;
  let next: unknown = project ?? current;
  for (const c of changes) {
    if (!isDeepStrictEqual(valueAtPath(current, c.path), c.to))
      throw new AppError(
        "CONFLICT",
        `${c.path.join(".")} changed again after #${input.version}: revert the later change first, or edit it`,
      );
    next = setAtPath(next, c.path, c.from);
  }
  if (!project) return saveServerOverride(deps, next, actor, { revertOf: input.version });
  return saveProject(deps, project, { ...(next as Project), id: project.id }, actor, { revertOf: input.version, role });
}

// --- what is in force, and where it came from ----------------------------------------------

export type SettingSource = "built-in" | "settings.json" | "server" | "project";

export interface EffectiveSetting {
  field: SettingsField;
  path: string;
  value: unknown;
  source: SettingSource;
}

/** Each setting's value for a project (or the server, without one) and the layer it came from. */
export function effectiveSettings(file: Settings, server: SettingsOverride, project?: SettingsOverride): EffectiveSetting[] {
  const withServer = withOverride(file, server);
  const final = withOverride(withServer, project);
  return Object.entries(SETTINGS_FIELDS).map(([field, path]) => {
    const value = valueAtPath(final, path);
    const source: SettingSource =
      project && valueAtPath(project, path) !== undefined
        ? "project"
        : valueAtPath(server, path) !== undefined
          ? "server"
          : isDeepStrictEqual(valueAtPath(file, path), valueAtPath(DEFAULT_SETTINGS, path))
            ? "built-in"
            : "settings.json";
    return { field: field as SettingsField, path: path.join("."), value, source };
  });
}

/** settings.json as the web process reads it (defaults when it is invalid: its errors are reported elsewhere). */
export function fileSettings(): Settings {
  return loadSettings(webSettingsPath()).settings;
}

/**
 * The admin's access lists in force over a project's override (none: the server's own):
 * settings.json, the server's overrides and the project's, each adding to the one below,
 * read now. An invalid settings.json counts as the defaults, which allow no private host
 * (its errors are reported where it is validated): a broken file never widens access.
 * Runners keep the default settings file (as their other settings are read); the web
 * process passes `webSettingsPath()`.
 */
export async function accessInForce(
  store: EventStore,
  project: SettingsOverride | undefined,
  options: { settingsFile?: string; db?: Queryable } = {},
): Promise<AccessSettings> {
  const { settings } = loadSettings(options.settingsFile);
  const { override } = await serverOverride(store, options.db);
  return withOverride(withOverride(settings, override), project).access;
}
