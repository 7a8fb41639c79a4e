// MCP servers handed to the agent CLIs (docs/delivery.md, "MCP servers for agents"): what an admin may list (a command the CLI
// starts, or a URL it connects to), and how a run resolves the secrets they name. Secrets
// are named, never written: `envFrom` maps a variable of the MCP server to the runner's
// variable holding its value, `bearerTokenEnv` names the runner's variable holding a URL
// server's token; both are read on the runner at each run, like a shell's apiKeyEnv. How
// each CLI is told about them is its adapter's (server/agents/shells/).
import { z } from "zod";
import { isServerSecret, looksSecret, SERVER_SECRET_ENV, type EnvSource } from "../process/env";
import { AgentError } from "./types";

const ZMcpServerName = z
  .string()
  .min(1, "must not be empty")
  .max(64, "must be at most 64 characters")
  .regex(/^[a-z0-9_-]+$/, "must use lower-case letters, digits, '_' and '-'");

const ZMcpEnvName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be the name of an environment variable (letters, digits and '_')")
  .refine((name) => !isServerSecret(name), {
    message: `must not be one of the runner's own secrets (${SERVER_SECRET_ENV.join(", ")})`,
  });

const ZNoNul = z.string().refine((s) => !s.includes("\0"), "must not contain a NUL byte");

/** Where a server listens: http(s), never with credentials in it (they come from bearerTokenEnv). */
const ZMcpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).refine((u) => {
  const url = new URL(u);
  return url.username === "" && url.password === "";
}, "must not contain credentials: name the runner's variable holding the token in bearerTokenEnv");

const COMMAND_FIELDS = ["command", "args", "env", "envFrom"] as const;
const URL_FIELDS = ["url", "bearerTokenEnv"] as const;

/**
 * One MCP server: a command the CLI starts itself (stdio, inside the run's sandbox), or a
 * URL it connects to (Streamable HTTP). One object with every field, checked as one or the
 * other, so a mistake is named by its field rather than "no union member matched".
 */
export const ZMcpServer = z
  .strictObject({
    name: ZMcpServerName,
    command: ZNoNul.min(1, "must not be empty").optional(),
    args: z.array(ZNoNul).optional(),
    /** Literal variables (never secrets: name those in envFrom). */
    env: z
      .record(ZMcpEnvName, ZNoNul)
      .superRefine((env, ctx) => {
        for (const name of Object.keys(env))
          if (looksSecret(name))
            ctx.addIssue({
              code: "custom",
              path: [name],
              message: `${name} holds a secret: map it to the runner's variable holding it in "envFrom" instead of writing its value`,
            });
      })
      .optional(),
    /** The MCP server's variable → the runner's variable its value is read from at each run. */
    envFrom: z.record(ZMcpEnvName, ZMcpEnvName).optional(),
    url: ZMcpUrl.optional(),
    /** The runner's variable holding the token sent as `Authorization: Bearer <token>`. */
    bearerTokenEnv: ZMcpEnvName.optional(),
  })
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [server.url === undefined ? "command" : "url"],
        message: "give either command (a server the CLI starts) or url (one it connects to)",
      });
      return;
    }
    const [kind, others] = server.url === undefined ? (["a command", URL_FIELDS] as const) : (["a URL", COMMAND_FIELDS] as const);
    for (const field of others)
      if (server[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: `is not a setting of ${kind} server` });
  })
  .transform((server): McpServer => {
    const { name, url, bearerTokenEnv, command, args, env, envFrom } = server;
    if (url !== undefined) return { name, url, ...(bearerTokenEnv ? { bearerTokenEnv } : {}) };
    return { name, command: command!, args: args ?? [], ...(env ? { env } : {}), ...(envFrom ? { envFrom } : {}) };
  });

export type McpCommandServer = {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  envFrom?: Record<string, string>;
};
export type McpUrlServer = { name: string; url: string; bearerTokenEnv?: string };
export type McpServer = McpCommandServer | McpUrlServer;
export type McpServerInput = z.input<typeof ZMcpServer>;

/**
 * The MCP servers of a project: names unique (each CLI keys its servers by name), and one
 * source per variable a server is given from the runner (Codex hands them over from its
 * own environment, where a name holds one value).
 */
export const ZMcpServers = z.array(ZMcpServer).superRefine((servers, ctx) => {
  const names = new Map<string, number>();
  const sources = new Map<string, { server: string; from: string }>();
  servers.forEach((server, i) => {
    const first = names.get(server.name);
    if (first !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: [i, "name"],
        message: `duplicate MCP server name "${server.name}" (also mcpServers[${first}])`,
      });
    } else names.set(server.name, i);
    if (!("command" in server)) return;
    for (const [name, from] of Object.entries(server.envFrom ?? {})) {
      const earlier = sources.get(name);
      if (earlier && earlier.from !== from) {
        ctx.addIssue({
          code: "custom",
          path: [i, "envFrom", name],
          message: `${name} is taken from ${earlier.from} by MCP server "${earlier.server}": one runner variable per name`,
        });
      } else sources.set(name, { server: server.name, from });
    }
  });
});

/** An MCP server with its secrets read from the runner: what one run hands to its CLI. */
export type ResolvedMcpServer =
  | { name: string; kind: "command"; command: string; args: string[]; env: Record<string, string>; envFrom: Record<string, string> }
  | { name: string; kind: "url"; url: string; bearerTokenEnv?: string; bearerToken?: string };

/**
 * The servers with the variables they name read from `source`. A variable that is not set
 * fails the run before the CLI starts (a server without its credentials would fail later,
 * less clearly). `envFrom` values are keyed by the MCP server's own variable names.
 */
export function resolveMcpServers(agent: string, servers: readonly McpServer[], source: EnvSource): ResolvedMcpServer[] {
  const read = (server: string, variable: string): string => {
    const value = source[variable];
    if (!value)
      throw new AgentError(
        "tool_error",
        `${agent}: environment variable ${variable} (named by MCP server "${server}") is not set on this runner`,
        false,
      );
    return value;
  };
  return servers.map((server) => {
    if ("command" in server) {
      const envFrom = Object.fromEntries(Object.entries(server.envFrom ?? {}).map(([name, from]) => [name, read(server.name, from)]));
      return { name: server.name, kind: "command", command: server.command, args: server.args, env: server.env ?? {}, envFrom };
    }
    return {
      name: server.name,
      kind: "url",
      url: server.url,
      ...(server.bearerTokenEnv ? { bearerTokenEnv: server.bearerTokenEnv, bearerToken: read(server.name, server.bearerTokenEnv) } : {}),
    };
  });
}

/** The values a run's MCP servers were given from the runner (kept out of what the CLI prints). */
export function mcpSecrets(servers: readonly ResolvedMcpServer[]): string[] {
  return servers.flatMap((s) => (s.kind === "command" ? Object.values(s.envFrom) : s.bearerToken ? [s.bearerToken] : []));
}

/**
 * The `mcpServers` object of Claude Code's --mcp-config and Gemini CLI's settings.json
 * (the same shape but for the URL key: Claude's `url` with `type: "http"`, Gemini's `httpUrl`).
 */
export function mcpServersJson(servers: readonly ResolvedMcpServer[], cli: "claude" | "gemini"): Record<string, unknown> {
  return Object.fromEntries(
    servers.map((s) => {
      if (s.kind === "command") {
        const env = { ...s.env, ...s.envFrom };
        const entry = {
          ...(cli === "claude" ? { type: "stdio" } : {}),
          command: s.command,
          args: s.args,
          ...(Object.keys(env).length ? { env } : {}),
          // Gemini asks before each tool of an untrusted server, and nobody is there to answer.
          ...(cli === "gemini" ? { trust: true } : {}),
        };
        return [s.name, entry];
      }
      const headers = s.bearerToken ? { headers: { Authorization: `Bearer ${s.bearerToken}` } } : {};
      return [s.name, cli === "claude" ? { type: "http", url: s.url, ...headers } : { httpUrl: s.url, ...headers, trust: true }];
    }),
  );
}
