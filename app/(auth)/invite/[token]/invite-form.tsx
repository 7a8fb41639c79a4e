"use client";
// The invited person's form: name, email (fixed when the invitation names one) and password;
// the account is created through the server action, then they are signed in with the same
// credentials and land on the dashboard (docs/auth.md, "Invitations").
import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { Field, NewPasswordFields, Notice, PrimaryButton } from "../../form-parts";
import { acceptInvitationAction } from "./actions";

type Errors = Record<string, string[] | undefined>;

export function InviteForm({ token, email, minPasswordLength }: { token: string; email: string | null; minPasswordLength: number }) {
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
      const result = await acceptInvitationAction({
        token,
        email: email ?? value("email"),
        name: value("name"),
        password: value("password"),
      });
      if (!result.ok) {
        setMessage(result.fieldErrors && Object.keys(result.fieldErrors).length ? "Check the fields below." : result.message);
        setErrors(result.fieldErrors ?? {});
        setPending(false);
        return;
      }
      const signedIn = await signIn("credentials", { email: result.email, password: value("password"), redirect: false });
      // Relative: the dashboard on the host this page was opened at.
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
