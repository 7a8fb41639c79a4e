// The server's base URL as clients use it: http(s), no credentials, no trailing slash.
export function normalizeServerUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error(`not a URL: ${JSON.stringify(raw)} (e.g. http://localhost:3000)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Error(`the server URL must be http:// or https://, not ${url.protocol}`);
  if (url.username || url.password) throw new Error("the server URL must not contain credentials");
  if (url.search || url.hash) throw new Error("the server URL must not contain a query or fragment");
  // Accept a pasted API URL too: the client adds /api/trpc itself.
  const pathname = url.pathname.replace(/\/+$/, "").replace(/\/api(\/trpc)?$/, "");
  return `${url.origin}${pathname}`;
}
