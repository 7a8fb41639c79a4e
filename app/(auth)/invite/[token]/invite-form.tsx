"use client";
// The invited person's form: name, email (fixed when the invitation names one) and password;
// the account is created through the server action, then they are signed in with the same
// credentials and land on the dashboard (docs/auth.md, "Invitations").
import { useNewAccountForm } from "../../new-account";
import { Field, NewPasswordFields, Notice, PrimaryButton } from "../../form-parts";
import { acceptInvitationAction } from "./actions";

export function InviteForm({ token, email, minPasswordLength }: { token: string; email: string | null; minPasswordLength: number }) {
  const { message, errors, pending, onSubmit } = useNewAccountForm((value) =>
    acceptInvitationAction({ token, email: email ?? value("email"), name: value("name"), password: value("password") }),
  );

  return (
    <form onSubmit={onSubmit} className="space-y-3.5">
      {message ? <Notice tone="error">{message}</Notice> : null}
      <Field label="Name" name="name" autoComplete="name" required autoFocus placeholder="Ada Lovelace" errors={errors.name} />
      {email ? (
        <Field
          label="Email"
          name="email"
          type="email"
          autoComplete="username"
          value={email}
          readOnly
          hint="The invitation is for this email."
        />
      ) : (
        <Field
          label="Email"
          name="email"
          type="email"
          autoComplete="username"
          required
          placeholder="you@example.com"
          errors={errors.email}
        />
      )}
      <NewPasswordFields minLength={minPasswordLength} errors={errors} />
      <div className="pt-1">
        <PrimaryButton pending={pending}>{pending ? "Creating…" : "Create account and sign in"}</PrimaryButton>
      </div>
    </form>
  );
}
