// /signin: email + password, plus a button per configured provider (GitHub, OIDC).
// Also next-auth's error page (?error=...). A signed-in visitor goes straight on.
import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { safeCallbackPath } from "@/lib/callback-url";
import { visitor } from "@/app/_lib/page-context";
import { authOptions } from "@/server/api/web";
import { logger } from "@/server/log";
import { AuthCard } from "../form-parts";
import { SignInForm } from "./sign-in-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

const ERRORS: Record<string, string> = {
  CredentialsSignin: "Wrong email or password, or the account is disabled.",
  AccessDenied: "This account may not sign in here. An admin must first add a user with your (verified) email address.",
  OAuthSignin: "The sign-in provider could not be reached. Try again.",
  OAuthCallback: "The sign-in provider did not complete the sign-in. Try again.",
  OAuthAccountNotLinked: "This email is already used by another sign-in method.",
  SessionRequired: "Sign in to continue.",
  Configuration: "Sign-in is misconfigured on the server (see its log).",
};

type SearchParams = Promise<Record<string, string | string[] | undefined>>;
const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export default async function SignInPage({ searchParams }: { searchParams: SearchParams }) {
  const params = await searchParams;
  const callbackUrl = safeCallbackPath(first(params.callbackUrl));
  const { user } = await visitor().catch((err: unknown) => {
    logger.warn({ err, route: "/signin" }, "sign-in page: could not read the session");
    return { user: null };
  });
  if (user) redirect(callbackUrl);

  const errorCode = first(params.error);
  const providers = authOptions.providers.filter((p) => p.type === "oauth").map((p) => ({ id: p.id, name: p.name }));
  return (
    <AuthCard title="Sign in" subtitle="Use the account an admin created for you.">
      <SignInForm
        providers={providers}
        callbackUrl={callbackUrl}
        initialError={errorCode ? (ERRORS[errorCode] ?? "Sign-in failed. Try again.") : null}
      />
    </AuthCard>
  );
}
