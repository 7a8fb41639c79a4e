// The header's navigation: its items, and which one is the page being shown. "New task" is
// that page only (an exact match), never every page under /sessions; a session and its
// replay and fork tree are reached from the dashboard and count as it; every settings
// section counts as Settings; the inbox and usage are their own.
export interface NavItem {
  label: string;
  href: string;
}

export const NEW_TASK_PATH = "/sessions/new";

export const NAV_ITEMS: readonly NavItem[] = [
  { label: "Dashboard", href: "/" },
  { label: "New task", href: NEW_TASK_PATH },
  { label: "Chat", href: "/conversations" },
  { label: "Inbox", href: "/inbox" },
  { label: "Usage", href: "/usage" },
  { label: "Settings", href: "/settings" },
];

/** The `href` of the navigation item that `path` (a pathname, no query) is, or null. */
export function currentNavHref(path: string): string | null {
  const p = path.length > 1 ? path.replace(/\/+$/, "") : path;
  if (p === NEW_TASK_PATH) return NEW_TASK_PATH;
  if (p === "/settings" || p.startsWith("/settings/")) return "/settings";
  if (p === "/inbox") return "/inbox";
  if (p === "/usage" || p.startsWith("/usage/")) return "/usage";
  if (p === "/conversations" || p.startsWith("/conversations/")) return "/conversations";
  if (p === "/" || p.startsWith("/sessions/")) return "/";
  return null;
}
