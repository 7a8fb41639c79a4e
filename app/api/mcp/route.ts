// /api/mcp — Cat Cafe's MCP endpoint over Streamable HTTP, stateless (API token only; server/api/mcp.ts).
import { mcpHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = mcpHandlers.POST;
export const GET = mcpHandlers.GET;
export const DELETE = mcpHandlers.DELETE;
