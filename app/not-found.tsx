// The one not-found page (HTTP 404) for every unknown path and every `notFound()`: an
// unknown session, its replay or fork tree, a conversation, any other path. It keeps the
// header, so the way on is where it always is, and says how to get back.
import type { Metadata } from "next";
import { AppLink } from "@/components/app-link";
import { visitor } from "./_lib/page-context";
import { PageShell } from "./_lib/page-shell";

export const metadata: Metadata = { title: "Not found" };

export default async function NotFound() {
  // The header shows who is signed in; a database that does not answer shows as nobody.
  const { user } = await visitor().catch(() => ({ user: null }));
  return (
    <PageShell user={user} path="">
      <section className="mx-auto max-w-xl py-12 text-center" aria-labelledby="not-found-title">
        <p className="font-mono text-sm text-zinc-600 dark:text-zinc-400">404</p>
        <h1 id="not-found-title" className="mt-1 text-xl font-semibold tracking-tight text-zinc-900 dark:text-zinc-100">
          Page not found
        </h1>
        <p className="mt-2 text-sm text-zinc-600 dark:text-zinc-300">
          Nothing lives at this address: the link may be mistyped, or the session or conversation may not exist.
        </p>
        <p className="mt-5 flex flex-wrap items-center justify-center gap-3 text-sm">
          <AppLink
            href="/"
            className="rounded-md bg-zinc-900 px-3 py-1.5 font-medium text-white hover:bg-zinc-800 dark:bg-zinc-100 dark:text-zinc-900 dark:hover:bg-white"
          >
            Back to the dashboard
          </AppLink>
          <AppLink href="/conversations" className="text-sky-700 hover:underline dark:text-sky-300">
            Conversations
          </AppLink>
        </p>
      </section>
    </PageShell>
  );
}
