// Building blocks of the sign-in and setup forms: the card, a labelled field, the primary
// button and a notice line. Presentational only.
import type { InputHTMLAttributes, ReactNode } from "react";

export function AuthCard({ title, subtitle, children }: { title: string; subtitle?: ReactNode; children: ReactNode }) {
  return (
    <section className="overflow-hidden rounded-lg border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60 dark:shadow-none">
      <header className="border-b border-zinc-200 px-6 py-4 dark:border-zinc-800">
        <h1 className="text-base font-semibold tracking-tight text-zinc-900 dark:text-zinc-100">{title}</h1>
        {subtitle ? <p className="mt-1 text-xs leading-relaxed text-zinc-500 dark:text-zinc-400">{subtitle}</p> : null}
      </header>
      <div className="px-6 py-5">{children}</div>
    </section>
  );
}

export function Field({
  label,
  hint,
  errors,
  ...input
}: { label: string; hint?: string; errors?: string[] | undefined } & InputHTMLAttributes<HTMLInputElement>) {
  const invalid = Boolean(errors?.length);
  return (
    <label className="block">
      <span className="text-xs font-medium text-zinc-700 dark:text-zinc-300">{label}</span>
      <input
        {...input}
        aria-invalid={invalid || undefined}
        className={`mt-1.5 block w-full rounded-md border bg-white px-3 py-2 text-sm text-zinc-900 shadow-sm outline-none transition placeholder:text-zinc-500 focus:ring-2 dark:bg-zinc-950 dark:text-zinc-100 dark:placeholder:text-zinc-600 ${
          invalid
            ? "border-rose-400 focus:border-rose-500 focus:ring-rose-500 dark:border-rose-500/70"
            : "border-zinc-300 focus:border-zinc-900 focus:ring-zinc-900 dark:border-zinc-700 dark:focus:border-zinc-400 dark:focus:ring-zinc-400"
        }`}
      />
      {invalid ? (
        <span className="mt-1 block text-xs text-rose-700 dark:text-rose-400">{errors?.join("; ")}</span>
      ) : hint ? (
        <span className="mt-1 block text-xs text-zinc-500 dark:text-zinc-400">{hint}</span>
      ) : null}
    </label>
  );
}

/** A new password and its confirmation (setup, an invitation's account). */
export function NewPasswordFields({ minLength, errors }: { minLength: number; errors: { password?: string[]; confirm?: string[] } }) {
  return (
    <>
      <Field
        label="Password"
        name="password"
        type="password"
        autoComplete="new-password"
        required
        minLength={minLength}
        hint={`At least ${minLength} characters.`}
        errors={errors.password}
      />
      <Field
        label="Confirm password"
        name="confirm"
        type="password"
        autoComplete="new-password"
        required
        minLength={minLength}
        errors={errors.confirm}
      />
    </>
  );
}

export function PrimaryButton({ pending, children }: { pending: boolean; children: ReactNode }) {
  return (
    <button
      type="submit"
      disabled={pending}
      className="flex w-full items-center justify-center gap-2 rounded-md bg-zinc-900 px-3 py-2 text-sm font-medium text-white shadow-sm transition hover:bg-zinc-800 focus-visible:ring-2 focus-visible:ring-zinc-900 focus-visible:outline-none disabled:cursor-wait disabled:opacity-60 dark:bg-zinc-100 dark:text-zinc-900 dark:hover:bg-white"
    >
      {pending ? <span className="size-3.5 animate-spin rounded-full border-2 border-current border-t-transparent" aria-hidden /> : null}
      {children}
    </button>
  );
}

export function Notice({ tone, children }: { tone: "error" | "info"; children: ReactNode }) {
  const classes =
    tone === "error"
      ? "border-rose-200 bg-rose-50 text-rose-700 dark:border-rose-900/60 dark:bg-rose-950/40 dark:text-rose-300"
      : "border-zinc-200 bg-zinc-50 text-zinc-600 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-400";
  return (
    <p role={tone === "error" ? "alert" : undefined} className={`rounded-md border px-3 py-2 text-xs leading-relaxed ${classes}`}>
      {children}
    </p>
  );
}
