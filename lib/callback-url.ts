// Where to go after signing in: only a path on this site, so a crafted sign-in link cannot
// send someone to another origin. The path is normalised the way a browser would read it
// (against a placeholder origin) and must stay on that origin; control characters (which
// browsers strip, turning "/\t/host" into "//host") and backslashes are refused outright.
const PLACEHOLDER_ORIGIN = "http://catcafe.invalid";

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
  // eslint-disable-next-line no-control-regex
  if (!path.startsWith("/") || /[\u0000-\u001f\u007f\\]/.test(path)) return fallback;
  let url: URL;
  try {
    url = new URL(path, PLACEHOLDER_ORIGIN);
  } catch {
    return fallback;
  }
  // "/x/..//y" normalises to "//y", which a browser reads as another host.
  if (url.origin !== PLACEHOLDER_ORIGIN || url.pathname.startsWith("//")) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}
