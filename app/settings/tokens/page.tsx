// `/settings/tokens` (everyone signed in, req U3): one's own API tokens — create (shown
// once), list, revoke — and, for an admin, everyone's tokens with their owner.
import type { Metadata } from "next";
import { SettingsFrame } from "@/components/settings/settings-frame";
import { ApiTokens } from "@/components/team/api-tokens";
import { TRPCReactProvider } from "@/lib/trpc/client";
import { readPage } from "../../_lib/page-context";
import { PageShell, ReadFailure } from "../../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "API tokens · Settings" };

export default async function TokensSettingsPage() {
  const path = "/settings/tokens";
  const read = await readPage(path, path, async ({ caller, user }) => {
    const [mine, everyone] = await Promise.all([caller.tokens.list(), user.role === "admin" ? caller.tokens.listAll() : null]);
    return { mine, everyone };
  });
  if (!read.ok)
    return (
      <PageShell user={read.user} path={path}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  return (
    <PageShell user={read.user} path={path}>
      <SettingsFrame
        active="tokens"
        title="API tokens"
        description="Personal tokens for scripts, CI and the catcafe CLI: each acts as you, with your role. The value is shown once; revoke a token the moment it may have leaked."
      >
        <TRPCReactProvider>
          <ApiTokens mine={read.data.mine} everyone={read.data.everyone} now={new Date().toISOString()} />
        </TRPCReactProvider>
      </SettingsFrame>
    </PageShell>
  );
}
