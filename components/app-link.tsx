// The app's links: client-side navigation, never prefetched. Next.js prefetches a link as it
// comes into view by rendering its page on the server ahead of any click, and every page here
// is dynamic (it reads the database): a list of links cost a server render per link each time
// it was opened, and a session page's breadcrumb and header links six renders while its first
// live batches were sent (docs/scaling.md, "The burst, hop by hop"). A click renders its
// page then. `next/link` is imported here only (eslint.config.mjs).
import Link from "next/link";
import type { ComponentProps } from "react";

export function AppLink(props: Omit<ComponentProps<typeof Link>, "prefetch">) {
  return <Link {...props} prefetch={false} />;
}
