"use client";
// The first-admin form: creates the account through the server action, then signs in
// with the same credentials and opens the dashboard.
import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { Field, NewPasswordFields, Notice, PrimaryButton } from "../form-parts";
import { createFirstAdmin } from "./actions";

type Errors = Record<string, string[] | undefined>;

export function SetupForm({ token, minPasswordLength }: { token: string; minPasswordLength: number }) {
  const [message, setMessage] = useState<string | null>(null);
  const [errors, setErrors] = useState<Errors>({});
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const value = (name: string) => String(form.get(name) ?? "");
    if (value("password") !== value("confirm")) {
      setErrors({ confirm: ["the two passwords differ"] });
      return;
    }
    setPending(true);
    setMessage(null);
    setErrors({});
    try {
      const result = await createFirstAdmin({ token, email: value("email"), name: value("name"), password: value("password") });
      if (!result.ok) {
        setMessage(result.fieldErrors && Object.keys(result.fieldErrors).length ? "Check the fields below." : result.message);
        setErrors(result.fieldErrors ?? {});
        setPending(false);
        return;
      }
      const signedIn = await signIn("credentials", { email: result.email, password: value("password"), redirect: false, callbackUrl: "/" });
      window.location.assign(signedIn?.ok && !signedIn.error ? "/" : "/signin");
    } catch {
      setMessage("The server could not be reached. Try again.");
      setPending(false);
    }
  }

  return (
    <form onSubmit={onSubmit} className="space-y-3.5">
      {message ? <Notice tone="error">{message}</Notice> : null}
      <Field label="Name" name="name" autoComplete="name" required autoFocus placeholder="Ada Lovelace" errors={errors.name} />
      <Field label="Email" name="email" type="email" autoComplete="username" required placeholder="you@example.com" errors={errors.email} />
      <NewPasswordFields minLength={minPasswordLength} errors={errors} />
      <div className="pt-1">
        <PrimaryButton pending={pending}>{pending ? "Creating…" : "Create admin and sign in"}</PrimaryButton>
      </div>
    </form>
  );
}
