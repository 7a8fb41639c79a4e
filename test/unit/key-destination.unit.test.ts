// Where a key may be sent (docs/security.md "Credentials are the server's to give"): to its
// provider's own API over HTTPS or to a host an admin named (access.agentHosts,
// access.privateHosts), never to an endpoint only the configuration chose — whoever writes a
// project's agents (an operator, a repository) cannot point the admin's key elsewhere.
import { describe, expect, it } from "vitest";
import { agentAccessRefusals, agentEnvPolicy } from "../../server/agents/access";
import { ZAgentConfig, type AgentConfig } from "../../server/agents/config";

const settings = (access: { agentHosts?: string[]; privateHosts?: string[] } = {}) => ({
  access: { agentEnv: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "TEAM_KEY"], agentHosts: [], privateHosts: [], ...access },
  delivery: {},
});
const agent = (config: Record<string, unknown>) => ZAgentConfig.parse({ id: "a", ...config }) as AgentConfig;
const refusals = (config: Record<string, unknown>, access?: Parameters<typeof settings>[0]) =>
  agentAccessRefusals(agent(config), agentEnvPolicy(settings(access))).map((r) => `${r.field} ${r.name}: ${r.message}`);

describe("where an agent's key may be sent", () => {
  it("to the provider's own API, at its default or named explicitly", () => {
    expect(refusals({ kind: "anthropic", model: "m", apiKeyEnv: "ANTHROPIC_API_KEY" })).toEqual([]);
    expect(refusals({ kind: "openai", model: "m", apiKeyEnv: "OPENAI_API_KEY", baseUrl: "https://api.openai.com/v1" })).toEqual([]);
    expect(refusals({ kind: "claude", apiKeyEnv: "ANTHROPIC_API_KEY", baseUrl: "https://api.anthropic.com" })).toEqual([]);
  });

  it("never to an endpoint only the configuration chose, a brain's or a CLI's, nor to the provider's host without TLS", () => {
    expect(refusals({ kind: "openai", model: "m", apiKeyEnv: "OPENAI_API_KEY", baseUrl: "https://collector.example.net/v1" })).toEqual([
      "apiKeyEnv OPENAI_API_KEY: OPENAI_API_KEY is sent only to the provider's own API (api.openai.com) or a host an admin allows " +
        "(settings access.agentHosts or access.privateHosts); baseUrl's collector.example.net:443 is neither",
    ]);
    expect(refusals({ kind: "claude", apiKeyEnv: "ANTHROPIC_API_KEY", baseUrl: "https://collector.example.net" })).toHaveLength(1);
    expect(refusals({ kind: "anthropic", model: "m", apiKeyEnv: "ANTHROPIC_API_KEY", baseUrl: "http://api.anthropic.com" })).toHaveLength(
      1,
    );
    // The provider's own host on another port is another endpoint.
    expect(
      refusals({ kind: "anthropic", model: "m", apiKeyEnv: "ANTHROPIC_API_KEY", baseUrl: "https://api.anthropic.com:8443" }),
    ).toHaveLength(1);
  });

  it("to a host an admin named, as a host to reach or a private host the server may call", () => {
    const gateway = { kind: "openai", model: "m", apiKeyEnv: "TEAM_KEY", baseUrl: "https://llm.corp.example/v1" };
    expect(refusals(gateway)).toHaveLength(1);
    expect(refusals(gateway, { agentHosts: ["llm.corp.example"] })).toEqual([]);
    expect(refusals(gateway, { agentHosts: ["*.corp.example"] })).toEqual([]);
    expect(refusals(gateway, { agentHosts: ["llm.corp.example:8443"] })).toHaveLength(1);
    const local = { kind: "openai", model: "m", apiKeyEnv: "TEAM_KEY", baseUrl: "http://127.0.0.1:4010/v1" };
    expect(refusals(local)).toHaveLength(1);
    expect(refusals(local, { privateHosts: ["127.0.0.1:4010"] })).toEqual([]);
  });

  it("judges no endpoint a key does not go to, nor one the runner's own variable names", () => {
    expect(refusals({ kind: "openai", model: "m", baseUrl: "https://collector.example.net/v1" })).toEqual([]);
    expect(refusals({ kind: "claude", apiKeyEnv: "ANTHROPIC_API_KEY", baseUrlEnv: "TEAM_GATEWAY_URL" })).toEqual([]);
  });
});
