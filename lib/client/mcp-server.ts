// Cat Cafe as an MCP server (issue 17): tools a person working in Claude Code, Codex or any
// MCP client uses to hand work to the team's agents and watch it — start a task, list
// sessions, read one, confirm, follow up, cancel. Each tool calls the server through the
// typed client with the caller's token, so the token's role applies: a viewer's confirm is
// refused (FORBIDDEN) as it would be anywhere else. A refusal comes back as the tool's error.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { CatCafeClient } from "./client";
import { describeError } from "./errors";

const ZSessionId = z.string().min(1).max(100).describe("the session id (s-…)");

function ok(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: { result: value } };
}

async function tool(run: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return ok(await run());
  } catch (err) {
    const { code, message } = describeError(err);
    return { isError: true, content: [{ type: "text", text: `${code}: ${message}` }] };
  }
}

export function createCatCafeMcpServer(client: CatCafeClient, version: string): McpServer {
  const server = new McpServer({ name: "catcafe", version });
  server.registerTool(
    "start_task",
    {
      description:
        "Start a task for a project's agents: a proposal roundtable that waits for your confirm, or an implementation that builds at once.",
      inputSchema: {
        projectId: z.string().min(1).describe("the project (see list_sessions or the dashboard)"),
        prompt: z.string().min(1).describe("what the agents should do"),
        mode: z.enum(["proposal", "implementation"]).optional().describe("default: the project's, else proposal"),
      },
    },
    (args) =>
      tool(() => client.tasks.start.mutate({ projectId: args.projectId, prompt: args.prompt, ...(args.mode ? { mode: args.mode } : {}) })),
  );
  server.registerTool(
    "list_sessions",
    {
      description: "The latest sessions, newest first, with their state and outcome.",
      inputSchema: {
        state: z.string().optional().describe("only sessions in this state (e.g. awaiting_operator_confirm)"),
        limit: z.number().int().min(1).max(100).optional(),
      },
    },
    (args) =>
      tool(async () => {
        const page = await client.sessions.list.query({ ...(args.state ? { state: args.state } : {}), limit: args.limit ?? 20 });
        return page.items.map((s) => ({
          id: s.id,
          title: s.title,
          workflow: s.workflow,
          state: s.state,
          outcome: s.outcome,
          projectId: s.projectId,
        }));
      }),
  );
  server.registerTool(
    "get_session",
    { description: "A session's state, outcome, step in progress and the task it runs.", inputSchema: { sessionId: ZSessionId } },
    (args) => tool(() => client.tasks.get.query({ sessionId: args.sessionId })),
  );
  server.registerTool(
    "confirm",
    { description: "Confirm a proposal that waits for a person (operator role).", inputSchema: { sessionId: ZSessionId } },
    (args) => tool(() => client.tasks.confirm.mutate({ sessionId: args.sessionId, via: "api" })),
  );
  server.registerTool(
    "follow_up",
    {
      description: "Send a follow-up to a running session (operator role).",
      inputSchema: { sessionId: ZSessionId, text: z.string().min(1) },
    },
    (args) => tool(() => client.tasks.followUp.mutate({ sessionId: args.sessionId, text: args.text })),
  );
  server.registerTool(
    "cancel",
    { description: "Cancel a running session (operator role).", inputSchema: { sessionId: ZSessionId, reason: z.string().optional() } },
    (args) => tool(() => client.tasks.cancel.mutate({ sessionId: args.sessionId, ...(args.reason ? { reason: args.reason } : {}) })),
  );
  return server;
}
