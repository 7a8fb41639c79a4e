// `catcafe mcp`: Cat Cafe as an MCP server over stdio (docs/delivery.md, "Cat Cafe as an MCP server"), for Claude Code, Codex or any
// MCP client: `claude mcp add catcafe -- npx catcafe mcp`. It signs in as `catcafe login` did
// (or CATCAFE_URL / CATCAFE_TOKEN), so the token's role applies to every tool.
import type { Command } from "commander";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { clientBackend, createCatCafeMcpServer } from "../../lib/client/mcp-server";
import { CliContext } from "../context";
import { examples } from "./help";

const VERSION = "0.1.0";

export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .description("serve Cat Cafe's tools over MCP on stdio: start_task, list_sessions, get_session, confirm, follow_up, cancel")
    .addHelpText(
      "after",
      examples(["claude mcp add catcafe -- npx catcafe mcp", "CATCAFE_URL=http://cats:3000 CATCAFE_TOKEN=… catcafe mcp"]),
    )
    .action(async (_options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const server = createCatCafeMcpServer(clientBackend(ctx.client()), VERSION);
      await server.connect(new StdioServerTransport());
      // Served until the client closes stdin.
      await new Promise<void>((resolve) => process.stdin.once("close", resolve));
      await server.close();
    });
}
