// Cat Cafe's MCP endpoint over HTTP (docs/api.md): `POST /api/mcp`, the MCP SDK's Streamable HTTP
// transport in stateless mode. Each request gets a fresh server and transport and is answered
// as JSON, so nothing is kept between requests and any web process can answer any of them;
// there is no stream to open (GET) and no session to end (DELETE): both are 405.
//
// The tools are those of `catcafe mcp` (lib/client/mcp-server.ts). Here they call the router
// in-process as the user of the request's API token, so the token's role applies exactly as
// over tRPC. Only `Authorization: Bearer` signs in: an MCP client has no browser session, and
// taking the cookie would let another site's page post to the endpoint with it (CSRF); without
// an ambient credential, Origin and Host need no check.
import { getTRPCErrorFromUnknown } from "@trpc/server";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createCatCafeMcpServer, type McpBackend } from "../../lib/client/mcp-server";
import { authenticateRequest, type CurrentUser } from "../auth/request";
import { AppError } from "../errors";
import { logger } from "../log";
import { APP_VERSION } from "../version";
import type { ApiDeps, ContextSource } from "./context";
import { clientMessage } from "./errors";
import { MAX_BODY_BYTES } from "./handler";
import { idempotent } from "./idempotency";
import { errorResponse } from "./rest";
import { createCaller } from "./root";

const ROUTE = "POST /api/mcp";

async function tokenUser(req: Request, source: ContextSource): Promise<CurrentUser> {
  if (req.headers.get("authorization") === null)
    throw new AppError("UNAUTHORIZED", "send an API token as `Authorization: Bearer cc_...` (create one with `catcafe token create`)");
  // With an Authorization header the cookie is never read: the user is the token's or none.
  const user = await authenticateRequest(req, { prisma: source.deps.prisma, secret: source.secret });
  if (!user) throw new AppError("UNAUTHORIZED", "the API token is unknown or revoked, or its user is disabled");
  return user;
}

/** The tools' backend for one request: the router called in-process as `user`. */
export function callerBackend(deps: ApiDeps, user: CurrentUser): McpBackend {
  return {
    calls: createCaller({ ...deps, user }),
    describeError(err) {
      const error = getTRPCErrorFromUnknown(err);
      if (error.code === "INTERNAL_SERVER_ERROR")
        logger.error({ err: error.cause ?? error, userId: user.id, route: ROUTE }, "MCP tool failed");
      return { code: error.code, message: clientMessage(error) };
    },
  };
}

/** One JSON-RPC exchange with a server and transport of its own (stateless mode). */
async function serve(req: Request, backend: McpBackend): Promise<Response> {
  const server = createCatCafeMcpServer(backend, APP_VERSION);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    // The same bound as tRPC's: a larger body is a 413 before it is parsed, whether its
    // Content-Length says so or it turns out larger while read.
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  try {
    await server.connect(transport);
    // With JSON responses the answer is complete when it resolves: closing after is safe.
    return await transport.handleRequest(req);
  } finally {
    await server.close();
  }
}

function methodNotAllowed(): Response {
  return Response.json(
    {
      jsonrpc: "2.0",
      error: { code: -32000, message: "Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages" },
      id: null,
    },
    { status: 405, headers: { Allow: "POST", "Cache-Control": "no-store" } },
  );
}

export function createMcpHandlers(source: () => ContextSource) {
  return {
    POST: async (req: Request): Promise<Response> => {
      try {
        const ctx = source();
        const user = await tokenUser(req, ctx);
        // A tool call sent with an Idempotency-Key (the MCP server of lib/client sends one per call) is carried out once.
        return await idempotent(ctx.deps.pool, req, user.id, (r) => serve(r, callerBackend(ctx.deps, user)));
      } catch (err) {
        return errorResponse(err, ROUTE);
      }
    },
    GET: methodNotAllowed,
    DELETE: methodNotAllowed,
  };
}
