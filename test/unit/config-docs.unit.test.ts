// The examples of docs/configuration.md are real: each block marked `tested` is read from
// the doc, loaded as the `.catcafe/` file it names, and every agent bound to what the
// runner would run.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ZAgentConfig } from "../../server/agents/config";
import { bindAgent } from "../../server/config/bind";
import { formatConfigErrors } from "../../server/config/errors";
import { parseProjectConfig } from "../../server/config/project-config";
import { ZSettings } from "../../server/config/schemas";

const DOC = fs.readFileSync(path.resolve(import.meta.dirname, "../../docs/configuration.md"), "utf8");

/** `.catcafe/<file>` → the JSON block after its `<!-- tested: ... -->` marker. */
function testedBlocks(): Record<string, string> {
  const blocks: Record<string, string> = {};
  for (const match of DOC.matchAll(/<!-- tested: \.catcafe\/([a-z]+\.json) -->\s*```json\n([\s\S]*?)```/g)) blocks[match[1]!] = match[2]!;
  return blocks;
}

describe("docs/configuration.md's example per agent CLI", () => {
  const blocks = testedBlocks();

  it("holds the shells, brains and agents files", () => {
    expect(Object.keys(blocks).sort()).toEqual(["agents.json", "brains.json", "shells.json"]);
  });

  it("loads without a problem and binds each agent to the CLI it names, with its endpoint, key variable, retries and permissions", () => {
    // With the settings the docs give beside it: the admin lets agents receive the example's own key variables.
    const settingsBlock = /<!-- tested: settings\.json -->\s*```json\n([\s\S]*?)```/.exec(DOC)![1]!;
    const result = parseProjectConfig(blocks, { settings: ZSettings.parse(JSON.parse(settingsBlock)) });
    expect(formatConfigErrors(result.errors)).toEqual([]);
    const runtime = (id: string) => {
      const bound = bindAgent(result.config!, id);
      expect(formatConfigErrors(bound.errors)).toEqual([]);
      // What the runner would run: a valid agent configuration.
      return ZAgentConfig.parse(bound.binding!.runtime);
    };
    expect(runtime("claude-coder")).toMatchObject({
      kind: "claude",
      model: "claude-sonnet-4-5",
      baseUrl: "https://llm-gateway.internal.example",
      apiKeyEnv: "TEAM_ANTHROPIC_API_KEY",
      providerRetries: 1,
      permissions: "edit",
      timeoutMs: 900_000,
    });
    expect(runtime("codex-coder")).toMatchObject({
      kind: "codex",
      model: "gpt-5",
      baseUrl: "https://api.openai.com/v1",
      apiKeyEnv: "OPENAI_API_KEY",
      providerRetries: 0,
      permissions: "full",
    });
    // No brain: the shell's own endpoint, key variable and model.
    expect(runtime("gemini-reviewer")).toMatchObject({
      kind: "gemini",
      model: "gemini-2.5-flash",
      baseUrl: "https://gemini-proxy.internal.example",
      apiKeyEnv: "TEAM_GEMINI_API_KEY",
      providerRetries: 2,
    });
    expect(runtime("house-tester")).toMatchObject({
      kind: "command",
      argv: ["/opt/agents/house-agent", "--task", "{prompt}"],
      prompt: "arg",
      network: true,
      env: { CATCAFE_BRAIN_PROVIDER: "openai", CATCAFE_BRAIN_MODEL: "gpt-5" },
      passEnv: ["OPENAI_API_KEY"],
    });
  });
});
