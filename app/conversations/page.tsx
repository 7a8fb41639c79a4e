// `/conversations`: the latest conversations with their mode and state, and (operators) a
// form to start one on a project in a collaboration mode (req C1–C8).
import type { Metadata } from "next";
import { AppLink } from "@/components/app-link";
import { EmptyState, Panel } from "@/components/panel";
import { StartConversationForm } from "@/components/conversation/start-conversation-form";
import { hasRole } from "@/lib/roles";
import { TRPCReactProvider } from "@/lib/trpc/client";
import { readPage } from "../_lib/page-context";
import { PageShell, ReadFailure } from "../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Conversations" };

const STATE_TONE: Record<string, string> = {
  open: "text-emerald-800 dark:text-emerald-300",
  stalled: "text-amber-800 dark:text-amber-300",
  terminated: "text-zinc-700 dark:text-zinc-300",
};

export default async function ConversationsPage() {
  const read = await readPage("/conversations", "/conversations", async ({ caller }) => ({
    conversations: await caller.conversations.list({ limit: 50 }),
    projects: await caller.projects.list(),
    modes: await caller.modes.list(),
  }));
  if (!read.ok)
    return (
      <PageShell user={read.user} path="/conversations">
        <ReadFailure failure={read} />
      </PageShell>
    );
  const { user, data } = read;
  return (
    <PageShell user={user} path="/conversations">
      <div className="mx-auto max-w-4xl space-y-4">
        <div>
          <h1 className="text-lg font-semibold text-zinc-900 dark:text-zinc-100">Conversations</h1>
          <p className="text-sm text-zinc-700 dark:text-zinc-300">
            Talk with a project&apos;s agents. The mode decides who answers: @mentions in free discussion, ordered steps in an SOP, parallel
            ballots in a vote, skill tags in expert routing. Agents that only call each other stop after a few turns until someone writes.
          </p>
        </div>
        {hasRole(user.role, "operator") && data.projects.length ? (
          <TRPCReactProvider>
            <StartConversationForm
              projects={data.projects.map((p) => ({ id: p.id, name: p.name, simulated: p.simulated }))}
              modes={data.modes}
            />
          </TRPCReactProvider>
        ) : null}
        <Panel title="Latest">
          {data.conversations.length ? (
            <ul className="divide-y divide-zinc-200 dark:divide-zinc-800" data-testid="conversation-list">
              {data.conversations.map((c) => (
                <li key={c.id} className="flex flex-wrap items-baseline gap-x-3 gap-y-1 px-4 py-2 text-sm">
                  <AppLink
                    href={`/conversations/${c.id}`}
                    className="min-w-0 font-medium break-words text-sky-800 underline-offset-2 hover:underline dark:text-sky-300"
                  >
                    {c.title}
                  </AppLink>
                  <span className="font-mono text-xs text-zinc-700 dark:text-zinc-300">{c.mode}</span>
                  <span className={`text-xs ${STATE_TONE[c.state] ?? ""}`}>{c.state}</span>
                  <span className="text-xs text-zinc-600 dark:text-zinc-400">{c.projectId}</span>
                </li>
              ))}
            </ul>
          ) : (
            <EmptyState title="No conversations yet" hint="Start one above, or run the demo (npm start) for one in each mode." />
          )}
        </Panel>
      </div>
    </PageShell>
  );
}
