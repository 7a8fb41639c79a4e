"use client";
// The submit of a form that makes an account (the first admin's, an invited person's): the two
// passwords must match, the server action creates the account, then the browser signs in with
// the same credentials and opens the dashboard on the host the page was opened at.
import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";

export type FieldErrors = Record<string, string[] | undefined>;
export type NewAccountResult = { ok: true; email: string } | { ok: false; message: string; fieldErrors?: FieldErrors };

export function useNewAccountForm(create: (value: (name: string) => string) => Promise<NewAccountResult>) {
  const [message, setMessage] = useState<string | null>(null);
  const [errors, setErrors] = useState<FieldErrors>({});
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
      const result = await create(value);
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

  return { message, errors, pending, onSubmit };
}
