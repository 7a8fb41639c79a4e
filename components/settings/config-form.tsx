"use client";
// The settings an admin edits in the dashboard: for the server (overrides of settings.json
// for every project) or for one project (its iteration cap, its overrides and its agents'
// models). Each field shows the override set at this level (empty: inherited) with the
// value in force and where it comes from; a rejected value's message, worded as the
// configuration files' are, sits beside its field. Operators see the same, read-only.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";

export interface SettingRow {
  field: string;
  path: string;
  value: unknown;
  source: string;
}

const LABELS: Record<string, { label: string; unit: string; hint: string }> = {
  stepTimeoutMs: { label: "Step timeout", unit: "ms", hint: "one attempt of an agent step" },
  commandTimeoutMs: { label: "Command timeout", unit: "ms", hint: "one allowlisted test command" },
  maxAttempts: { label: "Attempts per step", unit: "", hint: "the first included; 1 = never retry" },
  backoffMs: { label: "Backoff", unit: "ms, comma-separated", hint: "waits before the 2nd, 3rd, … attempt; the last repeats" },
  rateLimitMs: { label: "Brain rate limit", unit: "ms between calls", hint: "for brains that set none" },
  pruneFailedAfterDays: {
    label: "Clean up failed sessions after",
    unit: "days",
    hint: "their worktrees and refs are removed on their own; empty: never (docs/operations.md)",
  },
  keepFinishedDays: {
    label: "Keep finished sessions' worktrees for",
    unit: "days",
    hint: "on every runner host, after the session ended, whatever its outcome (0: at once); their work stays in commits and bundles (docs/operations.md)",
  },
  agentEnv: {
    label: "Variables agents may receive",
    unit: "comma-separated, * a wildcard",
    hint: "the runner's variables a passEnv or apiKeyEnv may name; adds to the level below",
  },
  agentHosts: {
    label: "Hosts agents may reach",
    unit: "host, *.host, host:port",
    hint: "besides their provider and MCP servers, on any address (a local model server); adds to the level below",
  },
  privateHosts: {
    label: "Private hosts the server may call",
    unit: "host, host:port",
    hint: "webhooks and brains on loopback or private addresses; adds to the level below",
  },
  deliveryTokenEnvAllowed: {
    label: "Delivery token variables",
    unit: "comma-separated, * a wildcard",
    hint: "the variables a project's delivery tokenEnv may name (docs/delivery.md); adds to the level below",
  },
};

/** Fields holding a list of names rather than numbers. */
const LIST_FIELDS = new Set(["agentEnv", "agentHosts", "privateHosts", "deliveryTokenEnvAllowed"]);

const input =
  "w-full rounded-md border border-zinc-300 bg-white px-2 py-1 font-mono text-xs text-zinc-900 outline-none focus:border-sky-500 focus:ring-2 focus:ring-sky-500 disabled:bg-zinc-50 disabled:text-zinc-500 aria-[invalid=true]:border-rose-500 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100 dark:disabled:bg-zinc-900";

const show = (v: unknown) => (Array.isArray(v) ? v.join(", ") : v === undefined || v === null ? "" : String(v));
/** A value as read beside a field: an empty list is "none". */
const shown = (v: unknown) => (Array.isArray(v) && v.length === 0 ? "none" : show(v));

function toValue(field: string, text: string): number | number[] | string[] | null {
  const t = text.trim();
  if (!t) return null;
  if (LIST_FIELDS.has(field)) return t.split(/[\s,]+/).filter(Boolean);
  if (field === "backoffMs")
    return t
      .split(/[\s,]+/)
      .filter(Boolean)
      .map(Number);
  return Number(t);
}

export function ConfigForm(props: {
  scope: "server" | "project";
  projectId?: string;
  /** The scope's own level in the source names ("server" or "project"). */
  settings: SettingRow[];
  maxIterations?: { value: number; inForce: number; source: string };
  models?: Array<{ role: string; kind: string; model: string }>;
  /** The history version the values come from: a save over a newer one is refused (reload). */
  version: number;
  /** The project's webhook (its origin only), for a project's form. */
  webhook?: { url: string; format: "json" | "slack" } | null;
  canEdit: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const own = props.scope;
  // The fields this form edits; a project's delivery has its own form (components/settings/delivery-form.tsx).
  const edited = props.settings.filter((s) => s.field in LABELS);
  const fill = (): Record<string, string> => ({
    ...Object.fromEntries(edited.map((s) => [s.field, s.source === own ? show(s.value) : ""])),
    ...(props.maxIterations ? { maxIterations: String(props.maxIterations.value) } : {}),
    ...Object.fromEntries((props.models ?? []).map((m) => [`models.${m.role}`, m.model])),
    webhookUrl: "",
    webhookFormat: props.webhook?.format ?? "json",
    webhookRemove: "",
  });
  const [values, setValues] = useState(fill);
  // A newer configuration (a save, a revert, another admin's change, shown after a refresh)
  // refills the fields: a later save must not send values from before it.
  const [filledAt, setFilledAt] = useState(props.version);
  if (props.version !== filledAt) {
    setFilledAt(props.version);
    setValues(fill());
  }
  const onSuccess = () => router.refresh();
  const project = useMutation(trpc.settings.configureProject.mutationOptions({ onSuccess }));
  const server = useMutation(trpc.settings.configureServer.mutationOptions({ onSuccess }));
  const save = props.scope === "project" ? project : server;
  const fieldErrors = trpcFieldErrors(save.error);
  const formError = save.error && Object.keys(fieldErrors).length === 0 ? save.error.message : null;
  const id = (field: string) => `${props.scope}-${props.projectId ?? "all"}-${field}`;
  const set = (field: string) => (e: React.ChangeEvent<HTMLInputElement>) => setValues((v) => ({ ...v, [field]: e.target.value }));

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const settings = Object.fromEntries(edited.map((s) => [s.field, toValue(s.field, values[s.field] ?? "")]));
    if (props.scope === "server") {
      server.mutate({ ...settings, expectedVersion: props.version });
      return;
    }
    const models = Object.fromEntries((props.models ?? []).map((m) => [m.role, values[`models.${m.role}`] ?? ""]));
    const newUrl = values.webhookUrl?.trim();
    project.mutate({
      projectId: props.projectId!,
      ...settings,
      maxIterations: Number(values.maxIterations),
      models,
      expectedVersion: props.version,
      // A new URL replaces it; "remove" drops it; else only the format may change.
      ...(values.webhookRemove ? { webhookUrl: null } : newUrl ? { webhookUrl: newUrl } : {}),
      ...(values.webhookRemove || (!newUrl && !props.webhook) ? {} : { webhookFormat: values.webhookFormat as "json" | "slack" }),
    });
  };

  const row = (field: string, label: string, hint: string, inForce: string, source: string, placeholder: string) => {
    const errors = fieldErrors[field];
    return (
      <div key={field} className="grid grid-cols-1 gap-1 py-2 sm:grid-cols-[11rem_minmax(0,1fr)_minmax(0,13rem)] sm:items-start sm:gap-3">
        <label htmlFor={id(field)} className="text-xs text-zinc-700 dark:text-zinc-300">
          {label}
          <span className="block text-xs text-zinc-500 dark:text-zinc-400">{hint}</span>
        </label>
        <div>
          <input
            id={id(field)}
            name={field}
            className={input}
            value={values[field] ?? ""}
            placeholder={placeholder}
            onChange={set(field)}
            disabled={!props.canEdit}
            aria-invalid={errors ? true : undefined}
            aria-describedby={errors ? `${id(field)}-error` : undefined}
          />
          {errors ? (
            <p id={`${id(field)}-error`} role="alert" className="mt-1 font-mono text-xs text-rose-700 dark:text-rose-400">
              {errors.join("; ")}
            </p>
          ) : null}
        </div>
        <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid={`in-force-${field}`}>
          in force: <span className="font-mono text-zinc-900 dark:text-zinc-100">{inForce}</span>{" "}
          <span className="rounded bg-zinc-100 px-1 py-px text-xs text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">{source}</span>
        </p>
      </div>
    );
  };

  return (
    <form onSubmit={submit} className="divide-y divide-zinc-100 dark:divide-zinc-800" aria-label={`${props.scope} settings`}>
      {props.maxIterations
        ? row(
            "maxIterations",
            "Iteration cap",
            "review and test loops before a session stops",
            String(props.maxIterations.inForce),
            props.maxIterations.source,
            "",
          )
        : null}
      {edited.map((s) => {
        const meta = LABELS[s.field] ?? { label: s.field, unit: "", hint: "" };
        return row(
          s.field,
          `${meta.label}${meta.unit ? ` (${meta.unit})` : ""}`,
          meta.hint,
          shown(s.value),
          s.source,
          s.source === own ? "" : `inherited: ${shown(s.value)}`,
        );
      })}
      {(props.models ?? []).map((m) =>
        row(`models.${m.role}`, `${m.role} model`, `the ${m.kind} agent of the project record`, m.model || "(its default)", "project", ""),
      )}
      {props.scope === "project" ? (
        <div className="grid grid-cols-1 gap-1 py-2 sm:grid-cols-[11rem_minmax(0,1fr)_minmax(0,13rem)] sm:items-start sm:gap-3">
          <label htmlFor={id("webhookUrl")} className="text-xs text-zinc-700 dark:text-zinc-300">
            Webhook
            <span className="block text-xs text-zinc-500 dark:text-zinc-400">POSTed to when a session needs a person</span>
          </label>
          <div className="space-y-1">
            <input
              id={id("webhookUrl")}
              name="webhookUrl"
              className={input}
              value={values.webhookUrl ?? ""}
              placeholder={props.webhook ? `set: ${props.webhook.url} (enter a new URL to replace it)` : "https://hooks.example.com/…"}
              onChange={set("webhookUrl")}
              disabled={!props.canEdit}
              aria-invalid={fieldErrors.webhookUrl ? true : undefined}
              aria-describedby={fieldErrors.webhookUrl ? `${id("webhookUrl")}-error` : undefined}
            />
            {fieldErrors.webhookUrl ? (
              <p id={`${id("webhookUrl")}-error`} role="alert" className="font-mono text-xs text-rose-700 dark:text-rose-400">
                {fieldErrors.webhookUrl.join("; ")}
              </p>
            ) : null}
            <div className="flex flex-wrap items-center gap-3 text-xs text-zinc-700 dark:text-zinc-300">
              <label className="flex items-center gap-1">
                body
                <select
                  aria-label="Webhook body"
                  className="rounded border border-zinc-300 bg-white px-1 py-0.5 dark:border-zinc-700 dark:bg-zinc-950"
                  value={values.webhookFormat}
                  disabled={!props.canEdit}
                  onChange={(e) => setValues((v) => ({ ...v, webhookFormat: e.target.value }))}
                >
                  <option value="json">JSON</option>
                  <option value="slack">Slack</option>
                </select>
              </label>
              {props.webhook ? (
                <label className="flex items-center gap-1">
                  <input
                    type="checkbox"
                    checked={Boolean(values.webhookRemove)}
                    disabled={!props.canEdit}
                    onChange={(e) => setValues((v) => ({ ...v, webhookRemove: e.target.checked ? "1" : "" }))}
                  />
                  remove
                </label>
              ) : null}
            </div>
          </div>
          <p className="text-xs text-zinc-600 dark:text-zinc-400">
            in force: <span className="font-mono text-zinc-900 dark:text-zinc-100">{props.webhook ? props.webhook.url : "none"}</span>
          </p>
        </div>
      ) : null}
      {props.canEdit ? (
        <div className="flex items-center gap-3 py-2">
          <button
            type="submit"
            disabled={save.isPending}
            className="rounded-md bg-sky-700 px-3 py-1.5 text-xs font-medium text-white hover:bg-sky-800 disabled:opacity-60"
          >
            {save.isPending ? "Saving…" : "Save"}
          </button>
          {save.isSuccess && !save.isPending ? (
            <span role="status" className="text-xs text-emerald-700 dark:text-emerald-400">
              {save.data.changes.length ? `Saved ${save.data.changes.length} change(s) as #${save.data.version}` : "Nothing changed"}
            </span>
          ) : null}
          {formError ? (
            <span role="alert" className="text-xs text-rose-700 dark:text-rose-400">
              {formError}
            </span>
          ) : null}
        </div>
      ) : (
        <p className="py-2 text-xs text-zinc-500 dark:text-zinc-400">Only admins change settings.</p>
      )}
    </form>
  );
}

export interface HistoryRow {
  version: number;
  at: string;
  actorName: string;
  changes: Array<{ path: Array<string | number>; from?: unknown; to?: unknown }>;
  revertOf: number | null;
}

/** What changed, when and by whom; admins may revert a change. */
export function ConfigHistory(props: { scope: "server" | "project"; projectId?: string; entries: HistoryRow[]; canEdit: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const revert = useMutation(trpc.settings.revert.mutationOptions({ onSuccess: () => router.refresh() }));
  if (props.entries.length === 0) return <p className="py-2 text-xs text-zinc-500 dark:text-zinc-400">No change recorded yet.</p>;
  return (
    <div>
      {revert.error ? (
        <p role="alert" className="py-1 text-xs text-rose-700 dark:text-rose-400">
          {revert.error.message}
        </p>
      ) : null}
      <ol className="divide-y divide-zinc-100 text-xs dark:divide-zinc-800" aria-label="Configuration history">
        {props.entries.map((e) => (
          <li key={e.version} className="flex flex-wrap items-start gap-x-3 gap-y-1 py-1.5">
            <span className="font-mono text-zinc-500 dark:text-zinc-400">#{e.version}</span>
            <span className="text-zinc-700 dark:text-zinc-300">
              {e.actorName} · {new Date(e.at).toLocaleString()}
              {e.revertOf ? ` · revert of #${e.revertOf}` : ""}
            </span>
            <ul className="w-full font-mono text-xs text-zinc-700 dark:text-zinc-300">
              {e.changes.map((c, i) => (
                <li key={i} className="break-all">
                  {c.path.join(".")}: {JSON.stringify(c.from ?? null)} → {JSON.stringify(c.to ?? null)}
                </li>
              ))}
            </ul>
            {props.canEdit ? (
              <button
                type="button"
                className="rounded border border-zinc-300 px-2 py-0.5 text-xs text-zinc-700 hover:bg-zinc-50 dark:border-zinc-700 dark:text-zinc-300 dark:hover:bg-zinc-800"
                onClick={() => revert.mutate({ scope: props.scope, projectId: props.projectId, version: e.version })}
              >
                Revert #{e.version}
              </button>
            ) : null}
          </li>
        ))}
      </ol>
    </div>
  );
}
