// The API over real HTTP without Next.js: a node HTTP server that hands /api/trpc and
// /api/mcp to the same handlers the routes use (server/api/handler.ts, server/api/mcp.ts),
// with the test's own dependencies. For clients that must talk HTTP (the CLI, `catcafe mcp`)
// where a full `npm start` is not the point.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createContextFactory, type ContextSource } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import { createMcpHandlers } from "../../server/api/mcp";

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

export async function startApiServer(source: () => ContextSource): Promise<ApiServer> {
  const createContext = createContextFactory(source);
  const mcp = createMcpHandlers(source);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        ...(body.length ? { body } : {}),
      });
      const path = new URL(request.url).pathname;
      const answer = path.startsWith("/api/trpc/")
        ? handleTrpc(request, createContext)
        : path === "/api/mcp" && req.method === "POST"
          ? mcp.POST(request)
          : Promise.resolve(Response.json({ error: { code: "NOT_FOUND", message: path } }, { status: 404 }));
      void answer.then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A request the dropping proxy passed on: what a test asserts on. */
export interface ProxiedRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  /** Whether its answer was dropped (the connection closed instead). */
  dropped: boolean;
}

/**
 * An HTTP proxy in front of `target` that passes every request on and, for those `drop`
 * picks, waits for the whole answer (the server has done the work) and then closes the
 * client's connection instead of sending it: a network that lost the answer.
 */
export async function startDroppingProxy(
  target: string,
  drop: (request: Omit<ProxiedRequest, "dropped">, seen: ProxiedRequest[]) => boolean,
): Promise<ApiServer & { seen: ProxiedRequest[] }> {
  const seen: ProxiedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string" && name !== "host") headers.set(name, value);
      const request = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        idempotencyKey: req.headers["idempotency-key"]?.toString() ?? null,
      };
      const dropped = drop(request, seen);
      seen.push({ ...request, dropped });
      void fetch(`${target}${req.url}`, { method: req.method, headers, ...(body.length ? { body } : {}) }).then(async (response) => {
        const answer = Buffer.from(await response.arrayBuffer());
        if (dropped) return void req.socket.destroy();
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(answer);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
