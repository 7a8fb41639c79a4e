// Who may scrape /metrics (docs/operations.md, "Metrics"): with CATCAFE_METRICS_TOKEN set,
// a request bearing it (`Authorization: Bearer <token>`), from anywhere; without it, only a
// request from a loopback or private address (127.0.0.0/8, ::1, 10/8, 172.16/12, 192.168/16,
// fc00::/7, fe80::/10, and those as IPv4-mapped IPv6) — where the address is the socket's own
// (a runner's server). An address a request only claims (X-Forwarded-For, on the web server)
// proves nothing: there, no token means no scrape. Anything else is refused: 401 when a
// token is wanted and missing or wrong, 403 otherwise.
import crypto from "node:crypto";
import net from "node:net";

export type MetricsAccess = { ok: true } | { ok: false; status: 401 | 403; message: string };

export interface MetricsRequest {
  /** The Authorization header, if any. */
  authorization: string | null;
  /** The client's address: the socket's own, or null where only a claimed one is known (the web server). */
  address: string | null;
}

/** Whether `address` is loopback or in a private range. */
export function isPrivateAddress(address: string): boolean {
  let a = address.trim().toLowerCase();
  if (a.startsWith("::ffff:") && net.isIPv4(a.slice(7))) a = a.slice(7);
  if (net.isIPv4(a)) {
    const [x, y] = a.split(".").map(Number) as [number, number];
    return x === 127 || x === 10 || (x === 172 && y >= 16 && y <= 31) || (x === 192 && y === 168);
  }
  if (net.isIPv6(a)) return a === "::1" || /^f[cd][0-9a-f]{0,2}:/.test(a) || /^fe[89ab][0-9a-f]?:/.test(a);
  return false;
}

function sameToken(given: string, wanted: string): boolean {
  const a = crypto.createHash("sha256").update(given).digest();
  const b = crypto.createHash("sha256").update(wanted).digest();
  return crypto.timingSafeEqual(a, b);
}

/** The rule itself: `token` is CATCAFE_METRICS_TOKEN (undefined or empty: not set). */
export function metricsAccess(request: MetricsRequest, token: string | undefined): MetricsAccess {
  if (token) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.authorization ?? "");
    if (match && sameToken(match[1]!, token)) return { ok: true };
    return { ok: false, status: 401, message: "metrics need the bearer token (CATCAFE_METRICS_TOKEN)" };
  }
  if (request.address && isPrivateAddress(request.address)) return { ok: true };
  if (request.address === null)
    return {
      ok: false,
      status: 403,
      message: "the web server's metrics need CATCAFE_METRICS_TOKEN: the address a request claims cannot be trusted",
    };
  return {
    ok: false,
    status: 403,
    message: "metrics are served to loopback and private addresses only; set CATCAFE_METRICS_TOKEN to scrape from elsewhere",
  };
}
