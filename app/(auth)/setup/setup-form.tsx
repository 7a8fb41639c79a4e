"use client";
// The first-admin form: creates the account through the server action, then signs in
// with the same credentials and opens the dashboard.
import { useNewAccountForm } from "../new-account";
import { Field, NewPasswordFields, Notice, PrimaryButton } from "../form-parts";
import { createFirstAdmin } from "./actions";

export function SetupForm({ token, minPasswordLength }: { token: string; minPasswordLength: number }) {
  const { message, errors, pending, onSubmit } = useNewAccountForm((value) =>
    createFirstAdmin({ token, email: value("email"), name: value("name"), password: value("password") }),
  );

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
