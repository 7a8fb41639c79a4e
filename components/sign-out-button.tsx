"use client";
// Signs out through next-auth (it posts with its CSRF token), then goes to the sign-in page
// of the host in use: a relative path, because next-auth would build its redirect on
// NEXTAUTH_URL (`localhost`), leaving someone who opened the app at 127.0.0.1 or by another
// name on a host where they have no session (docs/auth.md, "Signing out").
import { signOut } from "next-auth/react";
import { useState } from "react";

export function SignOutButton() {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      disabled={pending}
      onClick={() => {
        setPending(true);
        void signOut({ redirect: false })
          .catch(() => undefined)
          .then(() => window.location.assign("/signin"));
      }}
      className="rounded-md px-2 py-1 text-xs text-zinc-500 ring-1 ring-inset ring-zinc-200 hover:bg-zinc-50 hover:text-zinc-900 disabled:opacity-60 dark:text-zinc-400 dark:ring-zinc-800 dark:hover:bg-zinc-800/60 dark:hover:text-zinc-100"
    >
      {pending ? "Signing out…" : "Sign out"}
    </button>
  );
}
