// `/conversations/[id]`: one conversation, live (req C1–C8). The server renders the first view
// for the signed-in user; the client then follows it over SSE. Operators post, switch the
// mode and end it; viewers read. `?at=N` shows it as it was at event N (a replay), from where
// an operator can fork it.
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { cache } from "react";
import { ConversationView } from "@/components/conversation/conversation-view";
import { hasRole } from "@/lib/roles";
import { TRPCReactProvider } from "@/lib/trpc/client";
import { readPage, visitor } from "../../_lib/page-context";
import { PageShell, ReadFailure } from "../../_lib/page-shell";

export const dynamic = "force-dynamic";

type Params = Promise<{ id: string }>;

const readConversation = cache((id: string, at?: number) =>
  readPage(`/conversations/${id}`, "/conversations/[id]", ({ caller }) =>
    caller.conversations.get({ sessionId: id, ...(at !== undefined ? { atVersion: at } : {}) }),
  ),
);

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  const { user } = await visitor().catch(() => ({ user: null }));
  const read = user ? await readConversation(id) : null;
  return { title: read?.ok ? read.data.title : id };
}

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function ConversationPage({ params, searchParams }: { params: Params; searchParams: SearchParams }) {
  const { id } = await params;
  // `?at=N`: a replay, the conversation as it was at event N.
  const at = Number((await searchParams).at);
  const read = await readConversation(id, Number.isInteger(at) && at >= 1 ? at : undefined);
  const path = `/conversations/${id}`;
  // An unknown (or malformed) id is the not-found page, with its 404 status.
  if (!read.ok && (read.code === "NOT_FOUND" || read.code === "BAD_REQUEST")) notFound();
  if (!read.ok)
    return (
      <PageShell user={read.user} path={path}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  return (
    <PageShell user={read.user} path={path}>
      <div className="mx-auto max-w-4xl">
        <TRPCReactProvider>
          <ConversationView initial={read.data} canOperate={hasRole(read.user.role, "operator")} />
        </TRPCReactProvider>
      </div>
    </PageShell>
  );
}
