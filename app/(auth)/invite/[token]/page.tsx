// /invite/<token>: the page of an invitation's one-time link (req X2, docs/auth.md,
// "Invitations"). Signed out, the invited person sees the role and who invited them, and
// creates their account; a link that was used, revoked or has expired says so (never a 500).
import type { Metadata } from "next";
import { AppLink } from "@/components/app-link";
import { visitor } from "@/app/_lib/page-context";
import { SignOutButton } from "@/components/sign-out-button";
import { PASSWORD_MIN_LENGTH } from "@/server/auth/passwords";
import { describeDbError } from "@/server/health";
import { logger } from "@/server/log";
import { AuthCard, Notice } from "../../form-parts";
import { InviteForm } from "./invite-form";

export const dynamic = "force-dynamic";
// The link's token must not leave in a Referer header.
export const metadata: Metadata = { title: "Invitation", referrer: "no-referrer" };

const ARTICLE: Record<string, string> = { viewer: "a viewer", operator: "an operator", admin: "an admin" };
const ROLE_HINT: Record<string, string> = {
  viewer: "You will be able to read sessions, conversations and settings.",
  operator: "You will be able to start, confirm, review and cancel work.",
  admin: "You will also be able to manage configuration, users and tokens.",
};

const NO_LONGER = {
  accepted: ["This invitation was already used", "Each invitation link creates one account. If it was yours, sign in with it."],
  revoked: ["This invitation was revoked", "An admin withdrew it. Ask them for a new link."],
  expired: ["This invitation has expired", "Invitation links work for a limited time. Ask an admin for a new one."],
  unknown: ["This invitation link does not work", "Check that the whole link was copied, or ask an admin for a new one."],
} as const;

export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  let read: Awaited<ReturnType<typeof readInvitation>>;
  try {
    read = await readInvitation(token);
  } catch (err) {
    logger.error({ err, route: "/invite" }, "invitation: database read failed");
    return (
      <AuthCard title="Database unavailable">
        <Notice tone="error">{describeDbError(err)}</Notice>
      </AuthCard>
    );
  }
  const { user, view } = read;
  if (view.status !== "pending") {
    const [title, subtitle] = NO_LONGER[view.status];
    return (
      <AuthCard title={title} subtitle={subtitle}>
        <SignInLink />
      </AuthCard>
    );
  }
  return (
    <AuthCard
      title={`Join Cat Cafe as ${ARTICLE[view.role] ?? view.role}`}
      subtitle={
        <>
          <span className="font-medium text-zinc-700 dark:text-zinc-300">{view.invitedByName}</span> invited you. {ROLE_HINT[view.role]} The
          link works once, until {view.expiresAt.slice(0, 10)}.
        </>
      }
    >
      {user ? (
        <div className="space-y-3">
          <Notice tone="info">
            You are signed in as {user.name}. This link creates a new account: sign out first, then open the link again.
          </Notice>
          <SignOutButton />
        </div>
      ) : (
        <InviteForm token={token} email={view.email} minPasswordLength={PASSWORD_MIN_LENGTH} />
      )}
    </AuthCard>
  );
}

async function readInvitation(token: string) {
  const { user, caller } = await visitor();
  return { user, view: await caller.invitations.view({ token: decoded(token).slice(0, 200) }) };
}

/** The token as typed in the link; one that does not decode is taken as it is (and reads as unknown). */
function decoded(token: string): string {
  try {
    return decodeURIComponent(token);
  } catch {
    return token;
  }
}

function SignInLink() {
  return (
    <AppLink href="/signin" className="inline-flex text-xs font-medium text-zinc-900 underline-offset-4 hover:underline dark:text-zinc-100">
      Go to sign-in →
    </AppLink>
  );
}
