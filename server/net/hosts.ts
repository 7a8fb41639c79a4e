// Which hosts an admin allows, and which addresses are the host's own or its network's
// (docs/security.md "Network"). A host rule is `name`, `name:port`, `*.name` (any
// subdomain), an IPv4 address or a bracketed IPv6 one, each with an optional port; names
// compare case-insensitively. Addresses on loopback, link-local, private and other
// non-public ranges are refused to agents and to the server's own outbound calls (webhooks,
// brains) unless a rule names the host; the ranges come from node's BlockList.
import dns from "node:dns/promises";
import net from "node:net";
import os from "node:os";

export interface HostRule {
  /** Lower-case name or address (IPv6 without brackets); for a wildcard, the suffix after `*.`. */
  host: string;
  /** `*.name`: any subdomain of `host`, not `host` itself. */
  wildcard: boolean;
  /** null: any port. */
  port: number | null;
}

const NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** `text` as a rule, or why it is not one. */
export function parseHostRule(text: string): HostRule | { error: string } {
  const bad = (why: string) => ({
    error: `"${text}" is not a host rule (${why}): write a name, *.name, an IP address or [IPv6], with an optional :port`,
  });
  let rest = text.trim().toLowerCase();
  if (rest === "") return bad("empty");
  let port: number | null = null;
  let host: string;
  if (rest.startsWith("[")) {
    const end = rest.indexOf("]");
    if (end < 0) return bad("no closing ]");
    host = rest.slice(1, end);
    if (net.isIPv6(host) === false) return bad("not an IPv6 address in brackets");
    rest = rest.slice(end + 1);
    if (rest !== "" && !rest.startsWith(":")) return bad("unexpected text after ]");
    if (rest) {
      const p = portOf(rest.slice(1));
      if (p === null) return bad("the port must be 1 to 65535");
      port = p;
    }
    return { host, wildcard: false, port };
  }
  const colon = rest.lastIndexOf(":");
  if (colon >= 0) {
    if (rest.indexOf(":") !== colon) return bad("an IPv6 address must be in brackets");
    const p = portOf(rest.slice(colon + 1));
    if (p === null) return bad("the port must be 1 to 65535");
    port = p;
    rest = rest.slice(0, colon);
  }
  const wildcard = rest.startsWith("*.");
  host = wildcard ? rest.slice(2) : rest;
  if (net.isIPv4(host)) return wildcard ? bad("a wildcard needs a name") : { host, wildcard, port };
  if (!NAME.test(host)) return bad("not a host name");
  return { host, wildcard, port };
}

function portOf(text: string): number | null {
  if (!/^\d{1,5}$/.test(text)) return null;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/** The rules among `texts` (ones that do not parse are left out: the settings schema refuses them). */
export function hostRules(texts: readonly string[]): HostRule[] {
  return texts.map(parseHostRule).filter((r): r is HostRule => !("error" in r));
}

/** `host` without brackets, lower-case, without a trailing dot. */
export function normalHost(host: string): string {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.$/, "");
}

/** Whether one of `rules` allows `host` on `port`. */
export function hostAllowed(rules: readonly HostRule[], host: string, port: number): boolean {
  const name = normalHost(host);
  return rules.some((r) => (r.port === null || r.port === port) && (r.wildcard ? name.endsWith(`.${r.host}`) : name === r.host));
}

/** The default port of an http(s) URL's scheme. */
export function urlPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

const NOT_PUBLIC = new net.BlockList();
for (const [address, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  // Azure's platform endpoint (the others' metadata addresses are link-local or shared).
  ["168.63.129.16", 32],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  NOT_PUBLIC.addSubnet(address, prefix, "ipv4");
for (const [address, prefix] of [
  // The unspecified address, loopback and the deprecated IPv4-compatible ones (::a.b.c.d).
  ["::", 96],
  ["::1", 128],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["2001:db8::", 32],
] as const)
  NOT_PUBLIC.addSubnet(address, prefix, "ipv6");

/** The addresses of this host's own interfaces: a service bound to 0.0.0.0 answers on each as on loopback. */
function ownAddresses(): Set<string> {
  return new Set(
    Object.values(os.networkInterfaces())
      .flat()
      .map((i) => i?.address.toLowerCase().replace(/%.*$/, ""))
      .filter((a): a is string => Boolean(a)),
  );
}

/**
 * True for an address that is not on the public internet, or is this host's own: loopback,
 * link-local (cloud metadata at 169.254.169.254), private, shared, documentation, multicast
 * and reserved ranges, IPv4 ones also when written as IPv4-mapped IPv6 or behind the NAT64
 * prefix (64:ff9b::/96 reaches the IPv4 address it ends with), and every address of this
 * host's interfaces (a public one included).
 */
export function isNonPublicAddress(address: string): boolean {
  const ip = normalHost(address);
  if (ownAddresses().has(ip)) return true;
  if (net.isIPv4(ip)) return NOT_PUBLIC.check(ip, "ipv4");
  if (!net.isIPv6(ip)) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (mapped) return isNonPublicAddress(mapped[1]!);
  const nat64 = embeddedNat64(ip);
  if (nat64) return isNonPublicAddress(nat64);
  return NOT_PUBLIC.check(ip, "ipv6");
}

/** The IPv4 address at the end of a 64:ff9b::/96 address, or null for any other. */
function embeddedNat64(ip: string): string | null {
  const groups = ipv6Groups(ip);
  if (groups[0] !== 0x64 || groups[1] !== 0xff9b || groups.slice(2, 6).some((g) => g !== 0)) return null;
  const [high, low] = [groups[6]!, groups[7]!];
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted quad as two groups). */
function ipv6Groups(ip: string): number[] {
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  const text = quad
    ? `${ip.slice(0, quad.index)}${((+quad[1]! << 8) | +quad[2]!).toString(16)}:${((+quad[3]! << 8) | +quad[4]!).toString(16)}`
    : ip;
  const [head, tail] = text.includes("::") ? text.split("::") : [text, null];
  const part = (s: string | undefined | null) => (s ? s.split(":").map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  return tail === null ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

export type Resolve = (host: string) => Promise<string[]>;

/** Every address `host` resolves to (an address resolves to itself). */
export const resolveHost: Resolve = async (host) => {
  const name = normalHost(host);
  if (net.isIP(name)) return [name];
  const found = await dns.lookup(name, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

/**
 * Where a connection may go, or why not: `unresolved` (the name has no address: a network
 * failure, worth another try), `non_public` (on an address the admin did not allow).
 */
export type Destination = { ok: true; address: string } | { ok: false; why: "unresolved" | "non_public"; reason: string };

/**
 * Where a connection to `host:port` may go: the first address it resolves to, when every
 * address is public or a rule in `allowed` names the host (an admin's word that the host is
 * meant to be reached, whatever its address). Connecting to the address returned, never
 * resolving again, keeps a name from changing its answer between the check and the connection.
 */
export async function checkDestination(
  host: string,
  port: number,
  allowed: readonly HostRule[],
  options: { resolve?: Resolve; setting: string },
): Promise<Destination> {
  const resolve = options.resolve ?? resolveHost;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return { ok: false, why: "unresolved", reason: `${host} does not resolve` };
  }
  if (!addresses.length) return { ok: false, why: "unresolved", reason: `${host} does not resolve` };
  if (hostAllowed(allowed, host, port)) return { ok: true, address: addresses[0]! };
  const internal = addresses.find(isNonPublicAddress);
  if (internal)
    return {
      ok: false,
      why: "non_public",
      reason: `${host} is on a loopback, link-local or private address (${internal}); an admin can allow it in the settings (${options.setting})`,
    };
  return { ok: true, address: addresses[0]! };
}
