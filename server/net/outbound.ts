// The server's own outbound HTTP calls — webhook deliveries, brain calls and brain checks
// (docs/security.md, "Network"; docs/configuration.md, "Outbound calls"). Each call's host
// is checked when the call is made (server/net/hosts.ts): a name that resolves to a
// loopback, link-local, private or other non-public address is refused unless the admin's
// `access.privateHosts` names it. The connection then goes to the very address that was
// checked, through node:http's `lookup` hook: no second DNS answer between the check and
// the connection, so a name cannot pass the check as a public address and connect as a
// private one. The answer comes back as a web `Response`, as fetch gives it; redirects are
// never followed (the caller sees the 3xx).
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { Readable } from "node:stream";
import { checkDestination, hostRules, resolveHost, urlPort, type Resolve } from "./hosts";

/** The setting that allows hosts on non-public addresses, as messages name it. */
export const PRIVATE_HOSTS_SETTING = "access.privateHosts";

/** What a call may reach besides public addresses. */
export interface OutboundPolicy {
  /** The host rules of `access.privateHosts` in force (texts that do not parse are ignored). */
  privateHosts: readonly string[];
  /** How names resolve (default: the system's resolver); tests inject one. */
  resolve?: Resolve;
}

export interface OutboundRequest {
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/**
 * The call was not made: its host does not resolve (`unresolved`, a network failure like
 * any other), or it is on a non-public address the admin did not allow (`non_public`).
 */
export class OutboundRefused extends Error {
  constructor(
    readonly why: "unresolved" | "non_public",
    message: string,
  ) {
    super(message);
    this.name = "OutboundRefused";
  }
}

/** How long a save waits for a name to resolve before it leaves the judgement to the call. */
const SAVE_LOOKUP_MS = 3_000;

/** `resolve`, given up when `signal` aborts (a lookup cannot be cancelled, only no longer waited for). */
function bounded(resolve: Resolve, signal: AbortSignal | undefined): Resolve {
  if (!signal) return resolve;
  return (host) =>
    new Promise<string[]>((done, fail) => {
      const stop = () => fail(signal.reason);
      if (signal.aborted) return stop();
      signal.addEventListener("abort", stop, { once: true });
      resolve(host)
        .then(done, fail)
        .finally(() => signal.removeEventListener("abort", stop));
    });
}

/** Statuses whose response has no body (a web Response refuses one). */
const NULL_BODY_STATUS = new Set([204, 205, 304]);

/** One request to `url` under `policy`: the answer, or a rejection (OutboundRefused, or a network error with its `code`). */
export async function outboundFetch(url: string, request: OutboundRequest, policy: OutboundPolicy): Promise<Response> {
  const target = new URL(url);
  if (target.protocol !== "http:" && target.protocol !== "https:") throw new TypeError(`not an http(s) URL: ${target.protocol}`);
  request.signal?.throwIfAborted();
  const destination = await checkDestination(target.hostname, urlPort(target), hostRules(policy.privateHosts), {
    setting: PRIVATE_HOSTS_SETTING,
    resolve: bounded(policy.resolve ?? resolveHost, request.signal),
  });
  if (!destination.ok) throw new OutboundRefused(destination.why, destination.reason);
  request.signal?.throwIfAborted();
  const { address } = destination;
  const family = net.isIPv6(address) ? 6 : 4;
  const client = target.protocol === "https:" ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: request.method,
        headers: request.body === undefined ? request.headers : { ...request.headers, "content-length": Buffer.byteLength(request.body) },
        // A connection of its own (no pooled socket from another check), to the checked address;
        // TLS still verifies the certificate against the URL's host name.
        agent: false,
        lookup: (_hostname, options, callback) => (options.all ? callback(null, [{ address, family }]) : callback(null, address, family)),
        ...(request.signal ? { signal: request.signal } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 599) {
          res.destroy();
          reject(new TypeError(`unexpected HTTP status ${status}`));
          return;
        }
        const headers = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const empty = NULL_BODY_STATUS.has(status);
        if (empty) res.resume();
        const body = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        resolve(new Response(body, { status, statusText: res.statusMessage ?? "", headers }));
      },
    );
    req.on("error", reject);
    req.end(request.body);
  });
}

/**
 * Why a URL being saved (a webhook, a brain's baseUrl) would be refused when it is called:
 * its host is a non-public address, or resolves to one here, that `policy` does not allow.
 * Null when it would not. A name that does not resolve here is not refused: the runner
 * that calls it may resolve it, and checks it again then.
 */
export async function savedUrlProblem(url: string, policy: OutboundPolicy): Promise<string | null> {
  if (!URL.canParse(url)) return null; // the URL's own schema says what is wrong with it
  const target = new URL(url);
  const destination = await checkDestination(target.hostname, urlPort(target), hostRules(policy.privateHosts), {
    setting: PRIVATE_HOSTS_SETTING,
    resolve: bounded(policy.resolve ?? resolveHost, AbortSignal.timeout(SAVE_LOOKUP_MS)),
  });
  return destination.ok || destination.why === "unresolved" ? null : destination.reason;
}
