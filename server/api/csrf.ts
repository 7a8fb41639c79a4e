// Cross-site request forgery (docs/auth.md, "Cross-site requests"): the one rule for every
// request that may change something, the tRPC endpoint (./handler.ts) and the REST aliases
// (./rest.ts) alike. A browser sends the session cookie (SameSite=Lax) with a form posted from
// a page on another port of this host or a sibling subdomain, and with a `text/plain` or
// `multipart/form-data` fetch, none of which needs a CORS preflight; it never lets another
// origin send `application/json` unasked, and it names where a request comes from (`Origin`,
// `Sec-Fetch-Site`). So such a request is taken only as JSON and only from this site, unless
// it brings its own credential: `Authorization: Bearer` is judged alone, its cookie unread.
import { bearerToken } from "../auth/request";
import { AppError } from "../errors";

/** Methods that change nothing here: tRPC's queries and subscriptions, REST's reads. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** `application/json`, with parameters (`; charset=utf-8`) or without; no other type. */
const JSON_CONTENT_TYPE = /^application\/json\s*(;|$)/i;

/** The host (and port) this request was sent to: a reverse proxy's `X-Forwarded-Host`, else `Host`, else its URL's. */
function ownHost(req: Request): string {
  return req.headers.get("x-forwarded-host") ?? req.headers.get("host") ?? new URL(req.url).host;
}

/** Why the browser says `req` comes from another site, or null when it does not. */
function foreignSource(req: Request): string | null {
  const origin = req.headers.get("origin");
  if (origin !== null) {
    let originHost: string | null = null;
    try {
      originHost = new URL(origin).host;
    } catch {
      // "null" (a sandboxed page, a redirect across sites) or garbage: not this site
    }
    if (originHost !== ownHost(req)) return `Origin ${origin} is not this site`;
  }
  // `none`: the person's own navigation (a bookmark, the address bar), which cannot send a body.
  const site = req.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return `Sec-Fetch-Site is ${site}, not same-origin`;
  return null;
}

/**
 * The refusal of `req` as a cross-site request, or null when it may go on: FORBIDDEN (403)
 * when `Origin` or `Sec-Fetch-Site` names another site, UNSUPPORTED_MEDIA_TYPE (415) for a
 * body that is not JSON. A request with neither header is judged by its content type alone:
 * a browser names the origin of every POST, so it comes from a client that holds the cookie
 * itself (the CLI's `login`); and a browser too old to name it still cannot send JSON to
 * another origin without a preflight, which this server never answers.
 */
export function crossSiteRefusal(req: Request): AppError | null {
  if (SAFE_METHODS.has(req.method) || bearerToken(req) !== null) return null;
  const foreign = foreignSource(req);
  if (foreign !== null) {
    return new AppError(
      "FORBIDDEN",
      `cross-site request refused: ${foreign}. A call signed in by the session cookie must come from this site's own pages; scripts send an API token (Authorization: Bearer)`,
    );
  }
  const type = req.headers.get("content-type");
  if (type === null || !JSON_CONTENT_TYPE.test(type.trim())) {
    const got = type === null ? "no Content-Type" : type.split(";", 1)[0]!.trim();
    return new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      `send the body as JSON (Content-Type: application/json; got ${got}): a call signed in by the session cookie is taken only as JSON (CSRF)`,
    );
  }
  return null;
}
