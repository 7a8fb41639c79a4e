// /setup?token=...: the one-time first-run page (the link `npm start` prints while no user
// exists). Creates the first admin, then signs them in.
import type { Metadata } from "next";
import { AppLink } from "@/components/app-link";
import { setupTokenStatus, type SetupTokenStatus } from "@/server/auth/setup";
import { PASSWORD_MIN_LENGTH } from "@/server/auth/passwords";
import { getPrisma } from "@/server/db/prisma";
import { describeDbError } from "@/server/health";
import { logger } from "@/server/log";
import { AuthCard, Notice } from "../form-parts";
import { SetupForm } from "./setup-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Set up", referrer: "no-referrer" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function SetupPage({ searchParams }: { searchParams: SearchParams }) {
  const raw = (await searchParams).token;
  const token = Array.isArray(raw) ? raw[0] : raw;
  let status: SetupTokenStatus;
  try {
    status = await setupTokenStatus(getPrisma(), token);
  } catch (err) {
    logger.error({ err, route: "/setup" }, "setup: database read failed");
    return (
      <AuthCard title="Database unavailable">
        <Notice tone="error">{describeDbError(err)}</Notice>
      </AuthCard>
    );
  }

  if (status === "already_set_up") {
    return (
      <AuthCard title="Already set up" subtitle="Cat Cafe has its first admin. Setup links no longer work.">
        <SignInLink />
      </AuthCard>
    );
  }
  if (status === "invalid" || !token) {
    return (
      <AuthCard
        title="This setup link does not work"
        subtitle="A setup link works once, for 24 hours, and only the latest one printed is valid."
      >
        <div className="space-y-3 text-xs leading-relaxed text-zinc-600 dark:text-zinc-400">
          <p>
            Restart <Code>npm start</Code>: while no user exists it prints a fresh link. Or set <Code>ADMIN_EMAIL</Code> and{" "}
            <Code>ADMIN_PASSWORD</Code> before starting, and the admin is created for you.
          </p>
          <SignInLink />
        </div>
      </AuthCard>
    );
  }
  return (
    <AuthCard
      title="Create the first admin"
      subtitle="This account can add the rest of the team, give roles and manage tokens. The link stops working once it is used."
    >
      <SetupForm token={token} minPasswordLength={PASSWORD_MIN_LENGTH} />
    </AuthCard>
  );
}

function SignInLink() {
  return (
    <AppLink href="/signin" className="inline-flex text-xs font-medium text-zinc-900 underline-offset-4 hover:underline dark:text-zinc-100">
      Go to sign-in →
    </AppLink>
  );
}

function Code({ children }: { children: string }) {
  return (
    <code className="rounded border border-zinc-200 bg-zinc-50 px-1 py-0.5 font-mono text-xs text-zinc-700 dark:border-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
      {children}
    </code>
  );
}
