"use client";
// The sign-in form: credentials through next-auth without a page reload on failure;
// provider buttons hand over to next-auth's redirect flow.
import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { Field, Notice, PrimaryButton } from "../form-parts";

export function SignInForm({
  providers,
  callbackUrl,
  initialError,
}: {
  providers: Array<{ id: string; name: string }>;
  callbackUrl: string;
  initialError: string | null;
}) {
  const [error, setError] = useState<string | null>(initialError);
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    try {
      const result = await signIn("credentials", {
        email: String(form.get("email") ?? ""),
        password: String(form.get("password") ?? ""),
        redirect: false,
        callbackUrl,
      });
      if (result?.ok && !result.error) {
        // A full navigation, so every server-rendered page sees the new session cookie.
        window.location.assign(callbackUrl);
        return;
      }
      setError(
        result?.error === "CredentialsSignin" ? "Wrong email or password, or the account is disabled." : "Sign-in failed. Try again.",
      );
    } catch {
      setError("The server could not be reached. Try again.");
    }
    setPending(false);
  }

  return (
    <div className="space-y-4">
      {error ? <Notice tone="error">{error}</Notice> : null}
      <form onSubmit={onSubmit} className="space-y-3.5">
        <Field label="Email" name="email" type="email" autoComplete="username" required autoFocus placeholder="you@example.com" />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required />
        <div className="pt-1">
          <PrimaryButton pending={pending}>{pending ? "Signing in…" : "Sign in"}</PrimaryButton>
        </div>
      </form>
      {providers.length > 0 ? (
        <>
          <div className="flex items-center gap-3 text-xs tracking-wide text-zinc-500 uppercase dark:text-zinc-400">
            <span className="h-px flex-1 bg-zinc-200 dark:bg-zinc-800" />
            or
            <span className="h-px flex-1 bg-zinc-200 dark:bg-zinc-800" />
          </div>
          <div className="space-y-2">
            {providers.map((p) => (
              <button
                key={p.id}
                type="button"
                onClick={() => void signIn(p.id, { callbackUrl })}
                className="w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm font-medium text-zinc-800 shadow-sm transition hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-200 dark:hover:bg-zinc-900"
              >
                Continue with {p.name}
              </button>
            ))}
          </div>
        </>
      ) : null}
    </div>
  );
}
