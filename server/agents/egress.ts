// Agent egress by allowlist (docs/security.md "Network"). An agent that needs the network
// runs in its own network namespace with nothing but loopback; its only way out is this
// proxy, which the runner starts for the run on a Unix socket inside the run's directory and
// which a small bridge inside the sandbox (./egress-bridge.mjs) reaches on 127.0.0.1. The
// proxy speaks HTTP proxying (CONNECT for TLS and tunnels, absolute-form requests for plain
// HTTP) and lets a connection through only to:
//   - the hosts the agent's configuration needs: its provider's API, its base URL, its MCP
//     servers — each only on a public address;
//   - the hosts an admin allows (settings access.agentHosts) — on whatever address they
//     resolve to: that is how a provider on the host itself (a local model server, the
//     provider stubs of the tests) is reached.
// Everything else — the database, the web app, the runner, the cloud's metadata address,
// any other port — is refused with 403 and counted. The connection goes to the address
// that was checked, never resolved twice.
import fs from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  checkDestination,
  hostAllowed,
  hostRules,
  isNonPublicAddress,
  normalHost,
  parseHostRule,
  type HostRule,
  type Resolve,
} from "../net/hosts";

/** The proxy's port inside the sandbox (its own network namespace: no clash with the host's). */
const PROXY_PORT = 3128;

/** The API hosts (HTTPS) each agent CLI and brain provider talks to when no base URL is configured. */
export const PROVIDER_HOSTS = {
  claude: ["api.anthropic.com:443"],
  codex: ["api.openai.com:443", "chatgpt.com:443"],
  gemini: ["generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443"],
  openai: ["api.openai.com:443"],
  anthropic: ["api.anthropic.com:443"],
} as const;

export interface EgressRules {
  /** What the configuration needs (host rules): reached only on public addresses. */
  needed: readonly string[];
  /** What an admin allows (settings access.agentHosts): reached wherever they resolve. */
  allowed: readonly string[];
  /** A stand-in for DNS (tests): a name → its addresses. */
  resolve?: Resolve;
}

/** The host rule of a URL (its host and port), or null for what is not an http(s) URL. */
export function urlHostRule(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    return `${u.hostname}:${u.port || (u.protocol === "https:" ? 443 : 80)}`;
  } catch {
    return null;
  }
}

export interface Egress {
  /** The bridge's arguments before the program: [bridge file, its config, "--"]. */
  bridge: { script: string; config: string };
  /** Variables pointing the agent's HTTP clients at the proxy (HTTPS_PROXY and friends). */
  env: Record<string, string>;
  /** Connections refused so far, as `host:port`, each once, the first 20 (for the step's record). */
  refused: string[];
  close(): Promise<void>;
}

/** Ports an admin-allowed loopback host is reached on directly (127.0.0.1:8080 → listen on 8080 inside). */
function loopbackForwards(allowed: readonly HostRule[]): Array<{ host: string; port: number }> {
  return allowed
    .filter((r) => !r.wildcard && r.port !== null && (r.host === "localhost" || (net.isIP(r.host) !== 0 && isNonPublicAddress(r.host))))
    .filter((r) => r.port !== PROXY_PORT)
    .map((r) => ({ host: r.host === "localhost" ? "127.0.0.1" : r.host, port: r.port! }));
}

/**
 * Starts the proxy for one run, its socket and the bridge's files in `runDir` (bound into
 * the sandbox, removed with it). Close it when the run ends.
 */
export async function startEgress(runDir: string, rules: EgressRules): Promise<Egress> {
  const needed = hostRules(rules.needed);
  const allowed = hostRules(rules.allowed);
  const refused: string[] = [];
  const socket = path.join(runDir, "egress.sock");
  const script = path.join(runDir, "egress-bridge.mjs");
  const config = path.join(runDir, "egress.json");
  await fs.copyFile(fileURLToPath(new URL("./egress-bridge.mjs", import.meta.url)), script);
  await fs.writeFile(config, JSON.stringify({ socket, proxyPort: PROXY_PORT, forwards: loopbackForwards(allowed) }));

  /** Where host:port may be reached, or null (counted as refused). */
  const refuse = (name: string, port: number) => {
    const target = name.includes(":") ? `[${name}]:${port}` : `${name}:${port}`;
    if (refused.length < 20 && !refused.includes(target)) refused.push(target);
  };
  const destination = async (host: string, port: number): Promise<string | null> => {
    const name = normalHost(host);
    const admin = hostAllowed(allowed, name, port);
    if (!admin && !hostAllowed(needed, name, port)) {
      refuse(name, port);
      return null;
    }
    const checked = await checkDestination(name, port, admin ? allowed : [], {
      setting: "access.agentHosts",
      ...(rules.resolve ? { resolve: rules.resolve } : {}),
    });
    if (!checked.ok) {
      refuse(name, port);
      return null;
    }
    return checked.address;
  };

  const server = http.createServer(async (req, res) => {
    // A plain-HTTP request through the proxy: absolute-form URL.
    let url: URL;
    try {
      url = new URL(req.url ?? "");
      if (url.protocol !== "http:") throw new Error("not http");
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("egress proxy: absolute http:// URL expected\n");
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    const address = await destination(url.hostname, port);
    if (!address) {
      res.writeHead(403, { "content-type": "text/plain" }).end(`egress proxy: ${url.hostname}:${port} is not allowed for this agent\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    delete headers["proxy-authorization"];
    const upstream = http.request(
      { host: address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        // A response cut short upstream is cut short here too, never ended as if it were whole.
        answer.on("aborted", () => res.destroy());
        answer.on("error", () => res.destroy());
      },
    );
    upstream.on("error", () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { "content-type": "text/plain" }).end();
    });
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });

  server.on("connect", async (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on("error", () => {});
    const target = parseHostRule(req.url ?? "");
    if ("error" in target || target.wildcard || target.port === null) {
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const address = await destination(target.host, target.port);
    if (!address) {
      client.end("HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nnot allowed for this agent\n");
      return;
    }
    const upstream = net.connect(target.port, address, () => {
      open.add(upstream);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
    client.on("close", () => upstream.destroy());
  });

  const open = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  // The sandbox's user (nobody, mapped to the runner's uid) connects to it.
  await fs.chmod(socket, 0o600);
  const proxy = `http://127.0.0.1:${PROXY_PORT}`;
  return {
    bridge: { script, config },
    env: { HTTPS_PROXY: proxy, HTTP_PROXY: proxy, https_proxy: proxy, http_proxy: proxy, NO_PROXY: "", no_proxy: "" },
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}
