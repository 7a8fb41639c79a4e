// `/settings/users` (admin, req X2): the team's members — role, last sign-in, status — with
// role changes, disable / enable, invitations by one-time link and the pending ones.
import type { Metadata } from "next";
import { NeedsRole, SettingsFrame } from "@/components/settings/settings-frame";
import { TeamUsers } from "@/components/team/team-users";
import { TRPCReactProvider } from "@/lib/trpc/client";
import { readPage } from "../../_lib/page-context";
import { PageShell, ReadFailure } from "../../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Users · Settings" };

export default async function UsersSettingsPage() {
  const path = "/settings/users";
  const read = await readPage(path, path, async ({ caller, user }) => {
    const [users, invitations] = await Promise.all([caller.users.list(), caller.invitations.list()]);
    return { users, invitations, me: user.id };
  });
  // A role that may not read the section sees why (FORBIDDEN), inside the settings frame.
  if (!read.ok && read.code !== "FORBIDDEN")
    return (
      <PageShell user={read.user} path={path}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  return (
    <PageShell user={read.user} path={path}>
      <SettingsFrame
        active="users"
        title="Users"
        description="Who is on the team and with which role: viewers read, operators run and review work, admins also manage configuration, users and tokens. Every change is recorded with who made it."
      >
        {read.ok ? (
          <TRPCReactProvider>
            <TeamUsers users={read.data.users} invitations={read.data.invitations} me={read.data.me} />
          </TRPCReactProvider>
        ) : (
          <NeedsRole role="admin" what="The team's users" />
        )}
      </SettingsFrame>
    </PageShell>
  );
}
