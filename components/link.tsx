// The app's links: Next.js's Link, not prefetched unless a link asks for it. Next's router
// renders the page behind every link in view ahead of a click; on the session page that was
// six server renders per opening, taking the web process while the page's first live batches
// were read and sent, and a replay page's event list would ask for one per event in view
// (docs/scaling.md, "The burst, hop by hop"). A click renders its page then. `next/link` is
// imported here only (eslint.config.mjs).
import NextLink from "next/link";
import type { ComponentProps } from "react";

export default function Link({ prefetch = false, ...props }: ComponentProps<typeof NextLink>) {
  return <NextLink prefetch={prefetch} {...props} />;
}
