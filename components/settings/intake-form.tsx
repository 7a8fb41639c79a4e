"use client";
// A project's intake from its issue tracker (docs/intake.md): which repository's webhook
// deliveries are its, which triggers start a task (a label, an assignment to the bot user, a
// `/catcafe` comment from a member with write access), the workflow each starts and whether it
// confirms itself; and the webhook secret, set here and never shown again ("set on … by …").
// Rules are saved whole as the project's settings (a ConfigChanged in its history).
import { parseContenders } from "@/lib/bake-off";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import { SETTINGS_FIELD_CLASS as input, SETTINGS_LABEL_CLASS as label, SETTINGS_BUTTON_CLASS as button } from "@/components/form-classes";
import type { IntakeOverview } from "@/server/intake/overview";

/** The overview as `intake.show` answers it: who set the secret by name too. */
export type IntakeShown = Omit<IntakeOverview, "secret"> & {
  secret: (NonNullable<IntakeOverview["secret"]> & { setByName: string }) | null;
};

const TRIGGERS = [
  { key: "label", title: "Label", help: "adding the label to an issue" },
  { key: "assignment", title: "Assignment", help: "assigning the issue to the bot user" },
  { key: "comment", title: "Comment command", help: "a /catcafe comment from a member with write access" },
] as const;
type TriggerKey = (typeof TRIGGERS)[number]["key"];

interface TriggerValues {
  on: boolean;
  workflow: string;
  autoConfirm: boolean;
  /** A bake_off trigger's contenders, as typed: coder or coder:model, comma-separated (lib/bake-off.ts). */
  contenders: string;
}
interface Values {
  provider: string;
  repository: string;
  apiBaseUrl: string;
  botUser: string;
  maxPerHour: string;
  labelName: string;
  triggers: Record<TriggerKey, TriggerValues>;
}

function valuesOf(rules: IntakeOverview["rules"]): Values {
  const trigger = (k: TriggerKey): TriggerValues => {
    const t = rules?.triggers[k];
    return {
      on: Boolean(t),
      workflow: t?.workflow ?? "review_loop",
      autoConfirm: t?.autoConfirm ?? false,
      contenders: (t?.bakeOff?.contenders ?? []).map((c) => (c.model ? `${c.coder}:${c.model}` : c.coder)).join(", "),
    };
  };
  return {
    provider: rules?.provider ?? "",
    repository: rules?.repository ?? "",
    apiBaseUrl: rules?.apiBaseUrl ?? "",
    botUser: rules?.botUser ?? "",
    maxPerHour: String(rules?.maxPerHour ?? 10),
    labelName: rules?.triggers.label?.name ?? "catcafe",
    triggers: { label: trigger("label"), assignment: trigger("assignment"), comment: trigger("comment") },
  };
}

function rulesOf(v: Values): Record<string, unknown> | null {
  if (!v.provider) return null;
  const triggers = Object.fromEntries(
    TRIGGERS.filter((t) => v.triggers[t.key].on).map((t) => [
      t.key,
      {
        workflow: v.triggers[t.key].workflow,
        // A bake-off waits for a person's confirm (docs/bake-off.md): it forks the contenders.
        autoConfirm: v.triggers[t.key].workflow === "bake_off" ? false : v.triggers[t.key].autoConfirm,
        ...(v.triggers[t.key].workflow === "bake_off" ? { bakeOff: { contenders: parseContenders(v.triggers[t.key].contenders) } } : {}),
        ...(t.key === "label" ? { name: v.labelName.trim() } : {}),
      },
    ]),
  );
  return {
    provider: v.provider,
    repository: v.repository.trim(),
    ...(v.apiBaseUrl.trim() ? { apiBaseUrl: v.apiBaseUrl.trim() } : {}),
    ...(v.botUser.trim() ? { botUser: v.botUser.trim() } : {}),
    maxPerHour: Number(v.maxPerHour),
    triggers,
  };
}

export function IntakeForm({ overview, canEdit }: { overview: IntakeShown; canEdit: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [values, setValues] = useState(() => valuesOf(overview.rules));
  const [secret, setSecret] = useState("");
  const save = useMutation(trpc.intake.setRules.mutationOptions({ onSuccess: () => router.refresh() }));
  const setSecretCall = useMutation(
    trpc.intake.setSecret.mutationOptions({
      onSuccess: () => {
        setSecret("");
        router.refresh();
      },
    }),
  );
  const fieldErrors = trpcFieldErrors(save.error);
  const formError = save.error ? (fieldErrors.intake?.join("; ") ?? save.error.message) : null;
  const id = (f: string) => `intake-${overview.projectId}-${f}`;
  const set = (key: Exclude<keyof Values, "triggers">) => (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) => {
    setValues((v) => ({ ...v, [key]: e.target.value }));
    save.reset();
  };
  const setTrigger = (key: TriggerKey, patch: Partial<TriggerValues>) => {
    setValues((v) => ({ ...v, triggers: { ...v.triggers, [key]: { ...v.triggers[key], ...patch } } }));
    save.reset();
  };
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    save.mutate({ projectId: overview.projectId, rules: rulesOf(values), expectedVersion: overview.version });
  };
  const submitSecret = (e: React.FormEvent) => {
    e.preventDefault();
    setSecretCall.mutate({ projectId: overview.projectId, secret });
  };

  return (
    <div className="space-y-4 p-4">
      <form onSubmit={submit} aria-label="Intake rules" className="space-y-4">
        <div className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-3">
          <div>
            <label className={label} htmlFor={id("provider")}>
              Tracker
            </label>
            <select id={id("provider")} className={input} value={values.provider} onChange={set("provider")} disabled={!canEdit}>
              <option value="">(no intake)</option>
              <option value="github">GitHub</option>
              <option value="gitlab">GitLab</option>
            </select>
          </div>
          {values.provider ? (
            <>
              <div>
                <label className={label} htmlFor={id("repository")}>
                  Repository <span className="font-normal text-zinc-500 dark:text-zinc-400">(owner/name, group/name or id)</span>
                </label>
                <input
                  id={id("repository")}
                  className={`${input} font-mono`}
                  value={values.repository}
                  onChange={set("repository")}
                  disabled={!canEdit}
                  required
                />
              </div>
              <div>
                <label className={label} htmlFor={id("apiBaseUrl")}>
                  API base URL <span className="font-normal text-zinc-500 dark:text-zinc-400">(default: the tracker&apos;s)</span>
                </label>
                <input
                  id={id("apiBaseUrl")}
                  className={`${input} font-mono`}
                  value={values.apiBaseUrl}
                  onChange={set("apiBaseUrl")}
                  placeholder={values.provider === "gitlab" ? "https://gitlab.com/api/v4" : "https://api.github.com"}
                  disabled={!canEdit}
                />
              </div>
              <div>
                <label className={label} htmlFor={id("botUser")}>
                  Bot user <span className="font-normal text-zinc-500 dark:text-zinc-400">(for the assignment trigger)</span>
                </label>
                <input
                  id={id("botUser")}
                  className={`${input} font-mono`}
                  value={values.botUser}
                  onChange={set("botUser")}
                  disabled={!canEdit}
                />
              </div>
              <div>
                <label className={label} htmlFor={id("maxPerHour")}>
                  Tasks per hour, at most
                </label>
                <input
                  id={id("maxPerHour")}
                  type="number"
                  min={1}
                  max={1000}
                  className={input}
                  value={values.maxPerHour}
                  onChange={set("maxPerHour")}
                  disabled={!canEdit}
                />
              </div>
            </>
          ) : null}
        </div>
        {values.provider ? (
          <fieldset className="space-y-2">
            <legend className={label}>Triggers</legend>
            {TRIGGERS.map((t) => (
              <div
                key={t.key}
                className="grid grid-cols-1 items-center gap-2 rounded-md border border-zinc-200 p-2 sm:grid-cols-[minmax(0,1fr)_auto_auto] dark:border-zinc-800"
                data-testid={`intake-trigger-${t.key}`}
              >
                <label className="flex items-center gap-2 text-sm text-zinc-900 dark:text-zinc-100">
                  <input
                    type="checkbox"
                    checked={values.triggers[t.key].on}
                    onChange={(e) => setTrigger(t.key, { on: e.target.checked })}
                    disabled={!canEdit}
                  />
                  <span>
                    {t.title} <span className="text-xs text-zinc-600 dark:text-zinc-400">— {t.help}</span>
                  </span>
                </label>
                {t.key === "label" && values.triggers.label.on ? (
                  <input
                    aria-label="Label name"
                    className={`${input} font-mono sm:w-32`}
                    value={values.labelName}
                    onChange={set("labelName")}
                    disabled={!canEdit}
                  />
                ) : (
                  <span className="hidden sm:block" />
                )}
                <div className="flex flex-wrap items-center gap-2">
                  <select
                    aria-label={`${t.title}: workflow`}
                    className={`${input} sm:w-36`}
                    value={values.triggers[t.key].workflow}
                    onChange={(e) => setTrigger(t.key, { workflow: e.target.value })}
                    disabled={!canEdit || !values.triggers[t.key].on}
                  >
                    <option value="review_loop">review loop</option>
                    <option value="forge">Forge</option>
                    <option value="bake_off">bake-off</option>
                  </select>
                  {values.triggers[t.key].workflow === "bake_off" ? (
                    <input
                      aria-label={`${t.title}: bake-off contenders (coder or coder:model, comma-separated)`}
                      placeholder="claude-coder, codex-coder:o3"
                      className={`${input} font-mono sm:w-64`}
                      value={values.triggers[t.key].contenders}
                      onChange={(e) => setTrigger(t.key, { contenders: e.target.value })}
                      disabled={!canEdit || !values.triggers[t.key].on}
                    />
                  ) : (
                    <label className="flex items-center gap-1 text-xs text-zinc-700 dark:text-zinc-300">
                      <input
                        type="checkbox"
                        checked={values.triggers[t.key].autoConfirm}
                        onChange={(e) => setTrigger(t.key, { autoConfirm: e.target.checked })}
                        disabled={!canEdit || !values.triggers[t.key].on}
                      />
                      confirm itself
                    </label>
                  )}
                </div>
              </div>
            ))}
          </fieldset>
        ) : null}
        <div className="flex flex-wrap items-center gap-2">
          {canEdit ? (
            <button type="submit" className={`${button} bg-sky-700 text-white hover:bg-sky-800`} disabled={save.isPending}>
              {save.isPending ? "Saving…" : "Save intake rules"}
            </button>
          ) : null}
          <span role="status" className="text-xs text-emerald-800 dark:text-emerald-300">
            {save.isSuccess ? (save.data.changed ? `Saved (change #${save.data.version}).` : "Nothing changed.") : null}
          </span>
        </div>
        {formError ? (
          <p role="alert" className="text-xs text-rose-700 dark:text-rose-400">
            {formError}
          </p>
        ) : null}
      </form>

      <form onSubmit={submitSecret} aria-label="Webhook secret" className="space-y-2 border-t border-zinc-200 pt-4 dark:border-zinc-800">
        <p className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="intake-secret-status">
          Webhook secret:{" "}
          {overview.secret ? (
            <>
              set on <time dateTime={overview.secret.setAt}>{new Date(overview.secret.setAt).toUTCString()}</time> by{" "}
              <span>{overview.secret.setByName}</span>
            </>
          ) : (
            "not set (deliveries are refused until it is)"
          )}
        </p>
        {canEdit ? (
          <div className="flex flex-wrap items-end gap-2">
            <div className="min-w-0 flex-1">
              <label className={label} htmlFor={id("secret")}>
                {overview.secret ? "New secret (rotates it)" : "Secret"}{" "}
                <span className="font-normal text-zinc-500 dark:text-zinc-400">(at least 16 characters; never shown again)</span>
              </label>
              <input
                id={id("secret")}
                type="password"
                autoComplete="new-password"
                className={`${input} font-mono`}
                value={secret}
                onChange={(e) => {
                  setSecret(e.target.value);
                  setSecretCall.reset();
                }}
              />
            </div>
            <button
              type="submit"
              className={`${button} bg-zinc-900 text-white hover:bg-zinc-800 dark:bg-zinc-100 dark:text-zinc-900`}
              disabled={!secret || setSecretCall.isPending}
            >
              {setSecretCall.isPending ? "Setting…" : "Set secret"}
            </button>
          </div>
        ) : null}
        <span role="status" className="block text-xs text-emerald-800 dark:text-emerald-300">
          {setSecretCall.isSuccess ? `Secret ${setSecretCall.data.rotated ? "rotated" : "set"}.` : null}
        </span>
        {setSecretCall.error ? (
          <p role="alert" className="text-xs text-rose-700 dark:text-rose-400">
            {setSecretCall.error.message}
          </p>
        ) : null}
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          Webhook URLs: <span className="font-mono break-all">{overview.receivers.github}</span> (GitHub),{" "}
          <span className="font-mono break-all">{overview.receivers.gitlab}</span> (GitLab); content type application/json. See
          docs/intake.md.
        </p>
      </form>
    </div>
  );
}
