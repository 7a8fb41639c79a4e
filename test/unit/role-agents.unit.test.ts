// A role's agent as a person picks it (lib/role-agents.ts) and as `catcafe projects agent` /
// `catcafe projects delivery` read their flags (req X2): each choice becomes the agent
// configuration the server judges, a saved agent reads back as the choice it came from, and
// the delivery flags become the settings fields (an empty value clears one).
import { describe, expect, it } from "vitest";
import { choiceFromFlags, deliveryFromFlags } from "../../cli/commands/project-setup";
import { agentForChoice, argvFromText, argvToText, choiceOf, type RoleChoice } from "../../lib/role-agents";
import { ZAgentConfig } from "../../server/agents/config";

describe("a role's agent from a choice", () => {
  it("builds a valid agent for each kind, and reads it back as the same choice", () => {
    const choices: RoleChoice[] = [
      { kind: "shell", shell: "codex", model: "gpt-5-codex" },
      {
        kind: "brain",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        baseUrl: "http://127.0.0.1:9/v1",
        apiKeyEnv: "ANTHROPIC_API_KEY",
      },
      { kind: "command", argv: ["node", "agent.mjs", "{prompt}"], prompt: "arg" },
      { kind: "simulated" },
    ];
    for (const choice of choices) {
      const agent = agentForChoice("planner", choice);
      expect(ZAgentConfig.safeParse(agent).success, JSON.stringify(agent)).toBe(true);
      expect(choiceOf(agent as Record<string, unknown>)).toEqual(choice);
    }
    expect(agentForChoice("tester", { kind: "brain", provider: "openai", model: " gpt-5 ", baseUrl: " ", apiKeyEnv: "" })).toEqual({
      kind: "openai",
      id: "tester-openai",
      model: "gpt-5",
    });
  });

  it("splits a command line without a shell, quotes keeping spaces", () => {
    expect(argvFromText(`node "my agent.mjs" --flag 'a b' {prompt}`)).toEqual(["node", "my agent.mjs", "--flag", "a b", "{prompt}"]);
    expect(argvFromText(argvToText(["x", "with space", ""]))).toEqual(["x", "with space", ""]);
  });
});

describe("catcafe projects agent and delivery flags", () => {
  it("reads --kind and its flags, refusing what is missing with a usage error", () => {
    expect(choiceFromFlags({ kind: "none" })).toBeNull();
    expect(choiceFromFlags({ kind: "shell", shell: "gemini" })).toEqual({ kind: "shell", shell: "gemini" });
    expect(choiceFromFlags({ kind: "brain", model: "gpt-5", keyEnv: "OPENAI_API_KEY" })).toEqual({
      kind: "brain",
      provider: "openai",
      model: "gpt-5",
      apiKeyEnv: "OPENAI_API_KEY",
    });
    expect(choiceFromFlags({ kind: "command", argv: "node a.mjs" })).toEqual({ kind: "command", argv: ["node", "a.mjs"], prompt: "stdin" });
    expect(() => choiceFromFlags({ kind: "shell" })).toThrow(/--shell claude\|codex\|gemini/);
    expect(() => choiceFromFlags({ kind: "brain" })).toThrow(/needs --model/);
    expect(() => choiceFromFlags({ kind: "command" })).toThrow(/needs --argv/);
    expect(() => choiceFromFlags({ kind: "robot" })).toThrow(/--kind must be one of/);
  });

  it("turns the delivery flags into settings fields; an empty one clears it", () => {
    expect(deliveryFromFlags({ method: "push", remote: "origin", tokenEnv: "SHOP_TOKEN" })).toEqual({
      deliveryMethod: "push",
      deliveryRemote: "origin",
      deliveryTokenEnv: "SHOP_TOKEN",
    });
    expect(deliveryFromFlags({ remote: "", prProvider: "github", prRepository: "acme/shop" })).toEqual({
      deliveryRemote: null,
      deliveryPullRequest: { provider: "github", repository: "acme/shop" },
    });
    expect(deliveryFromFlags({ prProvider: "" })).toEqual({ deliveryPullRequest: null });
    expect(deliveryFromFlags({ test: true })).toEqual({});
  });
});
