// MCP servers in the settings (docs/delivery.md): none by default; a project's list replaces the
// server's; names unique and plain, URLs http(s) without credentials, secrets only by the
// name of the runner's variable — each mistake refused with a message naming its field,
// in settings.json and in a project record alike; snapshots keep the variables' names.
import { describe, expect, it } from "vitest";
import { ZMcpServers } from "../../server/agents/mcp";
import { DEFAULT_SETTINGS, withOverride, ZSettingsOverride } from "../../server/config/schemas";
import { redactSecrets } from "../../server/config/secrets";
import { parseSettings } from "../../server/config/settings";

const FILE = "/data/settings.json";
const GITHUB = { name: "github", command: "npx", args: ["-y", "@example/github-mcp"], envFrom: { TOKEN: "GITHUB_TOKEN" } };
const DOCS = { name: "docs", url: "https://mcp.example.com/mcp", bearerTokenEnv: "DOCS_MCP_TOKEN" };

/** settings.json's errors for these servers, as `path: message`. */
function fileErrors(mcpServers: unknown[]): string[] {
  return parseSettings(JSON.stringify({ mcpServers }), FILE).errors.map((e) => `${e.path}: ${e.message}`);
}

/** A project record's errors for these servers, as `path: message`. */
function recordErrors(mcpServers: unknown[]): string[] {
  const parsed = ZSettingsOverride.safeParse({ mcpServers });
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

describe("MCP servers in the settings", () => {
  it("none by default; a command server and a URL server are accepted as written, args defaulting to none", () => {
    expect(DEFAULT_SETTINGS.mcpServers).toEqual([]);
    const { settings, errors } = parseSettings(
      JSON.stringify({ mcpServers: [GITHUB, DOCS, { name: "fs_local-2", command: "mcp-fs" }] }),
      FILE,
    );
    expect(errors).toEqual([]);
    expect(settings.mcpServers).toEqual([GITHUB, DOCS, { name: "fs_local-2", command: "mcp-fs", args: [] }]);
  });

  it("a project's list replaces the server's; an empty one turns them off; left out, the server's stays", () => {
    const server = withOverride(DEFAULT_SETTINGS, ZSettingsOverride.parse({ mcpServers: [GITHUB] }));
    expect(withOverride(server, ZSettingsOverride.parse({ mcpServers: [DOCS] })).mcpServers).toEqual([DOCS]);
    expect(withOverride(server, ZSettingsOverride.parse({ mcpServers: [] })).mcpServers).toEqual([]);
    expect(withOverride(server, ZSettingsOverride.parse({ retry: { maxAttempts: 2 } })).mcpServers).toEqual([{ ...GITHUB }]);
  });

  it("duplicate names, a name that is not plain, a URL with credentials or not http(s): each refused, naming the field", () => {
    const bad = [
      GITHUB,
      { ...DOCS, name: "github" },
      { name: "Docs Server", url: "https://mcp.example.com/mcp" },
      { name: "creds", url: "https://user:pass@mcp.example.com/mcp" },
      { name: "ftp", url: "ftp://mcp.example.com/" },
    ];
    expect(recordErrors(bad)).toEqual([
      "mcpServers.2.name: must use lower-case letters, digits, '_' and '-'",
      "mcpServers.3.url: must not contain credentials: name the runner's variable holding the token in bearerTokenEnv",
      "mcpServers.4.url: must be an http(s) URL",
      'mcpServers.1.name: duplicate MCP server name "github" (also mcpServers[0])',
    ]);
    expect(fileErrors([GITHUB, { ...DOCS, name: "github" }])).toEqual([
      'mcpServers[1].name: duplicate MCP server name "github" (also mcpServers[0])',
    ]);
    expect(fileErrors([{ name: "Docs Server", url: "ftp://mcp.example.com/" }])).toEqual([
      `mcpServers[0].name: must use lower-case letters, digits, '_' and '-' (got "Docs Server")`,
      'mcpServers[0].url: must be an http(s) URL (got "ftp://mcp.example.com/")',
    ]);
  });

  it("a command and a URL at once, or neither, or a field of the other kind: refused", () => {
    expect(recordErrors([{ name: "both", command: "npx", url: "https://mcp.example.com/mcp" }])).toEqual([
      "mcpServers.0.url: give either command (a server the CLI starts) or url (one it connects to)",
    ]);
    expect(recordErrors([{ name: "none" }])).toEqual([
      "mcpServers.0.command: give either command (a server the CLI starts) or url (one it connects to)",
    ]);
    expect(
      recordErrors([
        { ...DOCS, args: ["--x"] },
        { ...GITHUB, bearerTokenEnv: "X_TOKEN" },
      ]),
    ).toEqual(["mcpServers.0.args: is not a setting of a URL server", "mcpServers.1.bearerTokenEnv: is not a setting of a command server"]);
  });

  it("secrets only by the runner's variable: a literal secret, a runner secret or two sources for one variable are refused", () => {
    expect(recordErrors([{ ...GITHUB, env: { GITHUB_TOKEN: "abc" } }])).toEqual([
      'mcpServers.0.env.GITHUB_TOKEN: GITHUB_TOKEN holds a secret: map it to the runner\'s variable holding it in "envFrom" instead of writing its value',
    ]);
    expect(fileErrors([{ ...GITHUB, env: { GITHUB_TOKEN: "abc" } }])).toEqual([
      `mcpServers[0].env.GITHUB_TOKEN: a literal value for the secret variable GITHUB_TOKEN is not allowed: map "GITHUB_TOKEN" to the runner's variable holding it in "envFrom" so the runner passes it from its own environment; remove it from the file and rotate it (it may already be in git history)`,
    ]);
    expect(
      recordErrors([
        { ...GITHUB, envFrom: { DB: "DATABASE_URL" } },
        { ...DOCS, bearerTokenEnv: "NEXTAUTH_SECRET" },
      ]),
    ).toEqual([
      "mcpServers.0.envFrom.DB: must not be one of the runner's own secrets (DATABASE_URL, NEXTAUTH_SECRET, ADMIN_PASSWORD, CATCAFE_METRICS_TOKEN)",
      "mcpServers.1.bearerTokenEnv: must not be one of the runner's own secrets (DATABASE_URL, NEXTAUTH_SECRET, ADMIN_PASSWORD, CATCAFE_METRICS_TOKEN)",
    ]);
    expect(recordErrors([GITHUB, { name: "gitlab", command: "mcp-gitlab", envFrom: { TOKEN: "GITLAB_TOKEN" } }])).toEqual([
      'mcpServers.1.envFrom.TOKEN: TOKEN is taken from GITHUB_TOKEN by MCP server "github": one runner variable per name',
    ]);
    // A key pasted where a variable's name belongs is refused without being repeated.
    const pasted = fileErrors([{ ...GITHUB, envFrom: { TOKEN: "ghp_0123456789abcdefABCDEF0123456789ab" } }]);
    expect(pasted[0]).toMatch(/^mcpServers\[0\]\.envFrom\.TOKEN: must be the NAME of an environment variable/);
    expect(pasted.join("\n")).not.toContain("ghp_0123456789");
  });

  it("snapshots keep the variables' names (envFrom's targets are names, not secrets)", () => {
    const servers = ZMcpServers.parse([GITHUB, DOCS]);
    expect(redactSecrets(servers)).toEqual(servers);
  });
});
