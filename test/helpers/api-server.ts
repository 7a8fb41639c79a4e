// The API over real HTTP without Next.js: a node HTTP server that hands /api/trpc and
// /api/mcp to the same handlers the routes use (server/api/handler.ts, server/api/mcp.ts),
// with the test's own dependencies. For clients that must talk HTTP (the CLI, `catcafe mcp`)
// where a full `npm start` is not the point. And a proxy in front of it that loses answers.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createContextFactory, type ContextSource } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import { createMcpHandlers } from "../../server/api/mcp";

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

/** A fetch Request for what node received (`base`: where the request is sent on to), its host header left out. */
function fetchRequest(req: http.IncomingMessage, body: Buffer, base: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string" && name !== "host") headers.set(name, value);
  return new Request(`${base}${req.url}`, { method: req.method, headers, ...(body.length ? { body: new Uint8Array(body) } : {}) });
}

/** Writes a fetch Response as node's answer. */
async function answerWith(res: http.ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(body);
}

/** An HTTP server on a free local port whose requests (read whole) go to `handle`. */
async function serveHttp(handle: (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) => void): Promise<ApiServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, Buffer.concat(chunks), res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function startApiServer(source: () => ContextSource): Promise<ApiServer> {
  const createContext = createContextFactory(source);
  const mcp = createMcpHandlers(source);
  return serveHttp((req, body, res) => {
    const request = fetchRequest(req, body, `http://${req.headers.host}`);
    const path = new URL(request.url).pathname;
    const answer = path.startsWith("/api/trpc/")
      ? handleTrpc(request, createContext)
      : path === "/api/mcp" && req.method === "POST"
        ? mcp.POST(request)
        : Promise.resolve(Response.json({ error: { code: "NOT_FOUND", message: path } }, { status: 404 }));
    void answer.then((response) => answerWith(res, response));
  });
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
  const server = await serveHttp((req, body, res) => {
    const request = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      idempotencyKey: req.headers["idempotency-key"]?.toString() ?? null,
    };
    const dropped = drop(request, seen);
    seen.push({ ...request, dropped });
    void fetch(fetchRequest(req, body, target)).then(async (response) => {
      if (!dropped) return answerWith(res, response);
      await response.arrayBuffer();
      req.socket.destroy();
    });
  });
  return { ...server, seen };
}
