"use client";
// A project's delivery settings (req X2, docs/delivery.md): how an approved session's work
// leaves — merged into a target branch, pushed to a remote, or pushed with a pull request —
// and the variable holding the token, from the admin's list (access.deliveryTokenEnv). Saved
// as the project's settings overrides (only the fields changed here; each save in the
// history); Test asks the web server to reach the remote (git ls-remote) and the provider's
// API with the token, and shows the answer in place. The token's value is never shown.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import { SETTINGS_FIELD_CLASS as input, SETTINGS_LABEL_CLASS as label, SETTINGS_BUTTON_CLASS as button } from "@/components/form-classes";

export interface DeliveryRow {
  field: string;
  value: unknown;
  source: string;
}

interface Values {
  method: string;
  remote: string;
  target: string;
  tokenEnv: string;
  provider: string;
  apiBaseUrl: string;
  repository: string;
}

function valuesOf(rows: DeliveryRow[]): Values {
  const of = (f: string) => rows.find((r) => r.field === f)?.value;
  const pr = (of("deliveryPullRequest") ?? null) as { provider?: string; apiBaseUrl?: string; repository?: string } | null;
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  return {
    method: text(of("deliveryMethod")) || "merge",
    remote: text(of("deliveryRemote")),
    target: text(of("deliveryTarget")) || "main",
    tokenEnv: text(of("deliveryTokenEnv")),
    provider: pr?.provider ?? "",
    apiBaseUrl: pr?.apiBaseUrl ?? "",
    repository: pr?.repository ?? "",
  };
}

export function DeliveryForm(props: { projectId: string; rows: DeliveryRow[]; tokenEnvAllowed: string[]; canEdit: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const filled = valuesOf(props.rows);
  const [values, setValues] = useState(filled);
  const save = useMutation(trpc.settings.configureProject.mutationOptions({ onSuccess: () => router.refresh() }));
  const test = useMutation(trpc.settings.testDelivery.mutationOptions());
  const fieldErrors = trpcFieldErrors(save.error);
  const formError = save.error && !Object.keys(fieldErrors).length ? save.error.message : null;
  const id = (f: string) => `delivery-${props.projectId}-${f}`;
  const set = (key: keyof Values) => (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) => {
    setValues((v) => ({ ...v, [key]: e.target.value }));
    save.reset();
  };
  const source = (f: string) => props.rows.find((r) => r.field === f)?.source ?? "built-in";
  const tokenNames = props.tokenEnvAllowed.filter((n) => !n.includes("*"));
  const tokenPatterns = props.tokenEnvAllowed.some((n) => n.includes("*"));

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const changed = (k: keyof Values) => values[k] !== filled[k];
    const orNull = (v: string) => v.trim() || null;
    const prChanged = changed("provider") || changed("apiBaseUrl") || changed("repository");
    save.mutate({
      projectId: props.projectId,
      ...(changed("method") ? { deliveryMethod: values.method } : {}),
      ...(changed("remote") ? { deliveryRemote: orNull(values.remote) } : {}),
      ...(changed("target") ? { deliveryTarget: orNull(values.target) } : {}),
      ...(changed("tokenEnv") ? { deliveryTokenEnv: orNull(values.tokenEnv) } : {}),
      ...(prChanged
        ? {
            deliveryPullRequest: values.provider
              ? {
                  provider: values.provider,
                  repository: values.repository.trim(),
                  ...(values.apiBaseUrl.trim() ? { apiBaseUrl: values.apiBaseUrl.trim() } : {}),
                }
              : null,
          }
        : {}),
    });
  };

  const errorOf = (field: string) => fieldErrors[field]?.join("; ");
  const described = (field: string) =>
    errorOf(field)
      ? { "aria-invalid": true as const, "aria-describedby": `${id(field)}-error` }
      : { "aria-describedby": `${id(field)}-from` };
  const note = (field: string) => (
    <>
      <span id={`${id(field)}-from`} className="mt-0.5 block text-xs text-zinc-500 dark:text-zinc-400">
        from: {source(field)}
      </span>
      {errorOf(field) ? (
        <span id={`${id(field)}-error`} role="alert" className="mt-0.5 block text-xs text-rose-700 dark:text-rose-400">
          {errorOf(field)}
        </span>
      ) : null}
    </>
  );

  return (
    <form onSubmit={submit} aria-label="Delivery settings" className="space-y-4 p-4">
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-3">
        <div>
          <label className={label} htmlFor={id("deliveryMethod")}>
            Method
          </label>
          <select
            id={id("deliveryMethod")}
            className={input}
            value={values.method}
            onChange={set("method")}
            disabled={!props.canEdit}
            {...described("deliveryMethod")}
          >
            <option value="merge">merge into the target branch</option>
            <option value="push">push the session&apos;s branch</option>
            <option value="pull_request">push and open a pull request</option>
          </select>
          {note("deliveryMethod")}
        </div>
        <div>
          <label className={label} htmlFor={id("deliveryRemote")}>
            Remote <span className="font-normal text-zinc-500 dark:text-zinc-400">(name, URL or path)</span>
          </label>
          <input
            id={id("deliveryRemote")}
            className={`${input} font-mono`}
            value={values.remote}
            onChange={set("remote")}
            placeholder="origin"
            disabled={!props.canEdit}
            {...described("deliveryRemote")}
          />
          {note("deliveryRemote")}
        </div>
        <div>
          <label className={label} htmlFor={id("deliveryTarget")}>
            Target branch
          </label>
          <input
            id={id("deliveryTarget")}
            className={`${input} font-mono`}
            value={values.target}
            onChange={set("target")}
            disabled={!props.canEdit}
            {...described("deliveryTarget")}
          />
          {note("deliveryTarget")}
        </div>
        <div>
          <label className={label} htmlFor={id("deliveryTokenEnv")}>
            Token variable{" "}
            <span className="font-normal text-zinc-500 dark:text-zinc-400">
              (admin&apos;s list: {props.tokenEnvAllowed.join(", ") || "empty"})
            </span>
          </label>
          {tokenPatterns ? (
            <input
              id={id("deliveryTokenEnv")}
              className={`${input} font-mono`}
              value={values.tokenEnv}
              onChange={set("tokenEnv")}
              disabled={!props.canEdit}
              {...described("deliveryTokenEnv")}
            />
          ) : (
            <select
              id={id("deliveryTokenEnv")}
              className={input}
              value={values.tokenEnv}
              onChange={set("tokenEnv")}
              disabled={!props.canEdit}
              {...described("deliveryTokenEnv")}
            >
              <option value="">(no token)</option>
              {[...new Set([...tokenNames, ...(values.tokenEnv ? [values.tokenEnv] : [])])].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          )}
          {note("deliveryTokenEnv")}
        </div>
        <div>
          <label className={label} htmlFor={id("provider")}>
            Pull requests on
          </label>
          <select
            id={id("provider")}
            className={input}
            value={values.provider}
            onChange={set("provider")}
            disabled={!props.canEdit}
            {...described("deliveryPullRequest")}
          >
            <option value="">(none)</option>
            <option value="github">GitHub</option>
            <option value="gitlab">GitLab</option>
          </select>
          {note("deliveryPullRequest")}
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
                disabled={!props.canEdit}
              />
            </div>
            <div>
              <label className={label} htmlFor={id("api")}>
                API base URL <span className="font-normal text-zinc-500 dark:text-zinc-400">(default: the provider&apos;s)</span>
              </label>
              <input
                id={id("api")}
                className={`${input} font-mono`}
                value={values.apiBaseUrl}
                onChange={set("apiBaseUrl")}
                placeholder={values.provider === "gitlab" ? "https://gitlab.com/api/v4" : "https://api.github.com"}
                disabled={!props.canEdit}
              />
            </div>
          </>
        ) : null}
      </div>
      <div className="flex flex-wrap items-center gap-2">
        {props.canEdit ? (
          <button type="submit" className={`${button} bg-sky-700 text-white hover:bg-sky-800`} disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save delivery"}
          </button>
        ) : null}
        {props.canEdit ? (
          <button
            type="button"
            className={`${button} bg-zinc-900 text-white hover:bg-zinc-800 dark:bg-zinc-100 dark:text-zinc-900`}
            disabled={test.isPending}
            onClick={() => test.mutate({ projectId: props.projectId })}
          >
            {test.isPending ? "Testing…" : "Test delivery"}
          </button>
        ) : null}
        <span role="status" className="text-xs text-emerald-800 dark:text-emerald-300">
          {save.isSuccess ? (save.data.changes.length ? `Saved (change #${save.data.version}).` : "Nothing changed.") : null}
        </span>
      </div>
      {formError ? (
        <p role="alert" className="text-xs text-rose-700 dark:text-rose-400">
          {formError}
        </p>
      ) : null}
      {test.error ? (
        <p role="alert" className="text-xs text-rose-700 dark:text-rose-400">
          {test.error.message}
        </p>
      ) : null}
      {test.data ? (
        <div
          role="status"
          data-testid="delivery-test-result"
          className={`rounded-md border p-2 text-xs ${test.data.ok ? "border-emerald-200 bg-emerald-50 text-emerald-900 dark:border-emerald-900/60 dark:bg-emerald-950/30 dark:text-emerald-200" : "border-rose-200 bg-rose-50 text-rose-900 dark:border-rose-900/60 dark:bg-rose-950/30 dark:text-rose-200"}`}
        >
          <p className="font-medium">
            {test.data.ok ? "✓" : "✗"} {test.data.message}
          </p>
          <ul className="mt-1 space-y-0.5">
            {test.data.steps.map((s) => (
              <li key={s.what}>
                {s.ok ? "✓" : "✗"} {s.what}: <span className="font-mono break-all">{s.message}</span>
              </li>
            ))}
            {test.data.tokenSet === false ? <li>the token variable is not set in the web server&apos;s environment</li> : null}
          </ul>
          <p className="mt-1 text-zinc-600 dark:text-zinc-400">
            Tested from the web server, with its environment; runners deliver with theirs.
          </p>
        </div>
      ) : null}
    </form>
  );
}
