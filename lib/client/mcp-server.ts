// Cat Cafe as an MCP server (docs/delivery.md): tools a person working in Claude Code, Codex or any
// MCP client uses to hand work to the team's agents and watch it — start a task, list
// sessions, read one, confirm, follow up, cancel. The tools are defined once here and call
// the procedures through a backend: the typed client with the caller's token (`catcafe mcp`
// on stdio) or the router called in-process as the token's user (`/api/mcp`, see
// server/api/mcp.ts). Either way the token's role applies: a viewer's confirm is refused
// (FORBIDDEN) as it would be anywhere else. A refusal comes back as the tool's error.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { CatCafeClient } from "./client";
import { parseContenders } from "../bake-off";
import { describeError } from "./errors";
import type { RouterInputs, RouterOutputs } from "./types";

type Call<I, O> = (input: I) => Promise<O>;

/** The procedures the tools call, shaped like the router (a server-side caller has this shape). */
export interface McpToolCalls {
  tasks: {
    start: Call<RouterInputs["tasks"]["start"], RouterOutputs["tasks"]["start"]>;
    get: Call<RouterInputs["tasks"]["get"], RouterOutputs["tasks"]["get"]>;
    confirm: Call<RouterInputs["tasks"]["confirm"], RouterOutputs["tasks"]["confirm"]>;
    followUp: Call<RouterInputs["tasks"]["followUp"], RouterOutputs["tasks"]["followUp"]>;
    cancel: Call<RouterInputs["tasks"]["cancel"], RouterOutputs["tasks"]["cancel"]>;
  };
  sessions: {
    list: Call<RouterInputs["sessions"]["list"], RouterOutputs["sessions"]["list"]>;
  };
  bakeOffs: {
    get: Call<RouterInputs["bakeOffs"]["get"], RouterOutputs["bakeOffs"]["get"]>;
    judge: Call<RouterInputs["bakeOffs"]["judge"], RouterOutputs["bakeOffs"]["judge"]>;
    pick: Call<RouterInputs["bakeOffs"]["pick"], RouterOutputs["bakeOffs"]["pick"]>;
  };
}

export interface McpBackend {
  calls: McpToolCalls;
  /** A failed call as the tool's error: its code (FORBIDDEN, NOT_FOUND, ...) and a message fit to show. */
  describeError(err: unknown): { code: string; message: string };
}

/** The backend of `catcafe mcp`: the typed client, over HTTP with the caller's token. */
export function clientBackend(client: CatCafeClient): McpBackend {
  return {
    calls: {
      tasks: {
        start: (input) => client.tasks.start.mutate(input),
        get: (input) => client.tasks.get.query(input),
        confirm: (input) => client.tasks.confirm.mutate(input),
        followUp: (input) => client.tasks.followUp.mutate(input),
        cancel: (input) => client.tasks.cancel.mutate(input),
      },
      sessions: { list: (input) => client.sessions.list.query(input) },
      bakeOffs: {
        get: (input) => client.bakeOffs.get.query(input),
        judge: (input) => client.bakeOffs.judge.mutate(input),
        pick: (input) => client.bakeOffs.pick.mutate(input),
      },
    },
    describeError,
  };
}

const ZSessionId = z.string().min(1).max(100).describe("the session id (s-…)");

function ok(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: { result: value } };
}

export function createCatCafeMcpServer(backend: McpBackend, version: string): McpServer {
  const { calls } = backend;
  const tool = async (run: () => Promise<unknown>): Promise<CallToolResult> => {
    try {
      return ok(await run());
    } catch (err) {
      const { code, message } = backend.describeError(err);
      return { isError: true, content: [{ type: "text", text: `${code}: ${message}` }] };
    }
  };
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
        bakeOff: z
          .string()
          .optional()
          .describe("a bake-off: 2 to 6 coders, comma-separated, each coder or coder:model (e.g. claude-coder,codex-coder:gpt-5)"),
      },
    },
    (args) =>
      tool(() =>
        calls.tasks.start({
          projectId: args.projectId,
          prompt: args.prompt,
          ...(args.mode ? { mode: args.mode } : {}),
          ...(args.bakeOff ? { bakeOff: { contenders: parseContenders(args.bakeOff) } } : {}),
        }),
      ),
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
        const page = await calls.sessions.list({ ...(args.state ? { state: args.state } : {}), limit: args.limit ?? 20 });
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
    (args) => tool(() => calls.tasks.get({ sessionId: args.sessionId })),
  );
  server.registerTool(
    "confirm",
    { description: "Confirm a proposal that waits for a person (operator role).", inputSchema: { sessionId: ZSessionId } },
    (args) => tool(() => calls.tasks.confirm({ sessionId: args.sessionId, via: "api" })),
  );
  server.registerTool(
    "follow_up",
    {
      description: "Send a follow-up to a running session (operator role).",
      inputSchema: { sessionId: ZSessionId, text: z.string().min(1) },
    },
    (args) => tool(() => calls.tasks.followUp({ sessionId: args.sessionId, text: args.text })),
  );
  server.registerTool(
    "cancel",
    { description: "Cancel a running session (operator role).", inputSchema: { sessionId: ZSessionId, reason: z.string().optional() } },
    (args) => tool(() => calls.tasks.cancel({ sessionId: args.sessionId, ...(args.reason ? { reason: args.reason } : {}) })),
  );
  server.registerTool(
    "get_bake_off",
    {
      description: "A bake-off: its contenders (coder, session, state, outcome), the judge's recommendation and the choice.",
      inputSchema: { sessionId: ZSessionId },
    },
    (args) => tool(() => calls.bakeOffs.get({ sessionId: args.sessionId })),
  );
  server.registerTool(
    "judge_bake_off",
    {
      description:
        "Ask the judge agent (the reviewer by default) to recommend a bake-off's winner once every contender has ended (operator role).",
      inputSchema: { sessionId: ZSessionId, judge: z.string().optional().describe("another agent to judge with") },
    },
    (args) => tool(() => calls.bakeOffs.judge({ sessionId: args.sessionId, ...(args.judge ? { judge: args.judge } : {}) })),
  );
  server.registerTool(
    "pick_winner",
    {
      description:
        "Pick a bake-off's winner (c1…c6): it is delivered by the project's settings, the others end not_chosen (operator role).",
      inputSchema: { sessionId: ZSessionId, contenderId: z.string().describe("c1 … c6"), reason: z.string().optional() },
    },
    (args) =>
      tool(() =>
        calls.bakeOffs.pick({ sessionId: args.sessionId, contenderId: args.contenderId, ...(args.reason ? { reason: args.reason } : {}) }),
      ),
  );
  return server;
}
