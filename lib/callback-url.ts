// Where to go after signing in: only a path on this site, so a crafted sign-in link cannot
// send someone to another origin.
export function safeCallbackPath(value: string | null | undefined, fallback = "/"): string {
  if (!value) return fallback;
  let path = value;
  // next-auth hands back absolute URLs of this site: keep their path.
  if (/^https?:\/\//i.test(value)) {
    try {
      const url = new URL(value);
      path = `${url.pathname}${url.search}${url.hash}`;
    } catch {
      return fallback;
    }
  }
  if (!path.startsWith("/") || path.startsWith("//") || path.startsWith("/\\")) return fallback;
  return path;
}
