// The typed client's and the CLI's pure parts: server URLs, export names (a hostile archive
// cannot write outside its folder), the config file's permissions, error reports, a secret
// typed at the terminal never echoed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { gates } from "../../cli/commands/forge";
import { agentFromFlag, agentsFromFile } from "../../cli/commands/projects";
import { configPath, readConfig, writeConfig } from "../../cli/config-file";
import { CliError, EXIT, exitCodeOf, formatReport, reportOf } from "../../cli/errors";
import { settingText } from "../../cli/output";
import { muteEcho } from "../../cli/prompt";
import {
  CatCafeHttpError,
  exportPathProblem,
  isSuccessfulOutcome,
  isWaitingForPerson,
  normalizeServerUrl,
  writeExportFiles,
} from "../../lib/client";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-client-unit-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("normalizeServerUrl", () => {
  it("keeps origin and path, drops a trailing slash or a pasted /api/trpc", () => {
    expect(normalizeServerUrl("http://localhost:3000/")).toBe("http://localhost:3000");
    expect(normalizeServerUrl(" https://cats.example.com/cafe/api/trpc ")).toBe("https://cats.example.com/cafe");
  });
  it("refuses what is not an http(s) URL or carries credentials", () => {
    expect(() => normalizeServerUrl("localhost:3000")).toThrow(/http/);
    expect(() => normalizeServerUrl("ftp://x")).toThrow(/http/);
    expect(() => normalizeServerUrl("http://u:p@x")).toThrow(/credentials/);
  });
});

describe("export files", () => {
  it("accepts the export layout's names and refuses climbing, absolute or hidden ones", () => {
    for (const ok of ["summary.json", "rounds/01/coder-build.txt"]) expect(exportPathProblem(ok)).toBeNull();
    for (const bad of ["../x", "rounds/../../x", "/etc/passwd", ".hidden", "a//b", "C:x"])
      expect(exportPathProblem(bad), bad).not.toBeNull();
  });
  it("writes into a new folder, never over anything, and refuses a bad name before writing", async () => {
    const out = path.join(tmp, "export");
    await writeExportFiles(
      new Map([
        ["summary.json", new TextEncoder().encode("{}")],
        ["rounds/01/meta.json", new TextEncoder().encode("{}")],
      ]),
      out,
    );
    expect(fs.readFileSync(path.join(out, "rounds/01/meta.json"), "utf8")).toBe("{}");
    await expect(writeExportFiles(new Map([["x.json", new Uint8Array()]]), out)).rejects.toThrow(/not empty/);
    const other = path.join(tmp, "other");
    await expect(
      writeExportFiles(
        new Map([
          ["ok.json", new Uint8Array()],
          ["../evil", new Uint8Array()],
        ]),
        other,
      ),
    ).rejects.toThrow(/refusing/);
    expect(fs.existsSync(other)).toBe(false);
  });
});

describe("session outcomes", () => {
  it("approved and done are success; an active run without a step waits for a person", () => {
    expect([
      isSuccessfulOutcome("approved"),
      isSuccessfulOutcome("done"),
      isSuccessfulOutcome("failed"),
      isSuccessfulOutcome(null),
    ]).toEqual([true, true, false, false]);
    expect(isWaitingForPerson({ status: "active", step: null })).toBe(true);
    expect(isWaitingForPerson({ status: "active", step: { role: "coder", state: "building" } })).toBe(false);
  });
});

describe("the CLI config file", () => {
  it("lives under XDG_CONFIG_HOME, else ~/.config; CATCAFE_CONFIG wins", () => {
    expect(configPath({ XDG_CONFIG_HOME: "/x/conf" })).toBe("/x/conf/catcafe/config.json");
    expect(configPath({ XDG_CONFIG_HOME: "relative", HOME: os.homedir() })).toBe(
      path.join(os.homedir(), ".config", "catcafe", "config.json"),
    );
    expect(configPath({ CATCAFE_CONFIG: "/y/c.json" })).toBe("/y/c.json");
  });
  it("is written 0600 in a 0700 folder, and a file others can read is refused", () => {
    const file = path.join(tmp, "conf", "catcafe", "config.json");
    const config = {
      version: 1 as const,
      url: "http://x",
      token: "cc_abc",
      tokenId: null,
      createdByLogin: false,
      user: null,
      savedAt: new Date().toISOString(),
    };
    writeConfig(file, config);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(readConfig(file)).toEqual(config);
    fs.chmodSync(file, 0o644);
    expect(() => readConfig(file)).toThrow(/chmod 600/);
    expect(readConfig(path.join(tmp, "none.json"))).toBeNull();
  });
});

describe("error reports", () => {
  it("field errors name the flag; codes come with what to do; exit codes", () => {
    const report = reportOf(new CatCafeHttpError("BAD_REQUEST", 400, "invalid input", { projectId: ["Required"] }));
    expect(formatReport(report)).toEqual(["invalid input: invalid input", "  projectId (--project): Required"]);
    expect(formatReport(reportOf(new CatCafeHttpError("CONFLICT", 409, "the session moved on")))[1]).toContain(
      "Someone else changed this session first",
    );
    expect(exitCodeOf(new Error("x"))).toBe(EXIT.FAILED);
    expect(exitCodeOf(new CliError("which project?", { code: "USAGE" }))).toBe(EXIT.USAGE);
  });
});

describe("a secret typed at the terminal", () => {
  /** Types `keys` into a terminal-mode readline asking `question`; what it answered and what the terminal showed. */
  async function typeInto(keys: string, mute: boolean) {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = "";
    output.on("data", (chunk: Buffer) => (shown += chunk.toString("utf8")));
    const rl = readline.createInterface({ input, output, terminal: true });
    try {
      const answer = new Promise<string>((resolve) => rl.question("Password: ", resolve));
      const muted = mute && muteEcho(rl, "Password: ", (text) => output.write(text));
      input.write(keys);
      return { answer: await answer, shown, muted };
    } finally {
      rl.close();
    }
  }

  it("is read whole (editing included) while the terminal shows the prompt and never a typed character", async () => {
    const { answer, shown, muted } = await typeInto("hunter\x7f\x7fer2\r", true);
    expect(muted).toBe(true);
    expect(answer).toBe("hunter2");
    expect(shown).toContain("Password: ");
    // Beside the prompt only cursor moves (ESC [ digits G/J): no letter that was typed.
    expect(shown.replaceAll("Password: ", "")).not.toMatch(/[a-z]/);
  });

  it("unmuted, the same typing is echoed (what muting prevents)", async () => {
    const { answer, shown } = await typeInto("hunter2\r", false);
    expect(answer).toBe("hunter2");
    expect(shown).toContain("hunter2");
  });
});

describe("catcafe projects add: agents", () => {
  it("--agent role=kind[:model] is that role's preset agent", () => {
    expect(agentFromFlag("coder=claude")).toEqual(["coder", { kind: "claude", id: "coder-claude" }]);
    expect(agentFromFlag(" reviewer=openai:gpt-5 ")).toEqual(["reviewer", { kind: "openai", id: "reviewer-openai", model: "gpt-5" }]);
    expect(agentFromFlag("tester=simulated")).toMatchObject(["tester", { kind: "scripted", id: "tester-sim" }]);
  });

  it("a flag that is not role=kind, an unknown role or kind, or a model missing is a usage error", () => {
    for (const [flag, message] of [
      ["coder", /write role=kind\[:model\], role one of coder, reviewer, tester, planner, executor/],
      ["boss=claude", /role one of/],
      ["Coder=claude", /role one of/],
      ["coder=gpt", /unknown kind "gpt"/],
      ["coder=openai", /needs its model/],
    ] as const) {
      expect(() => agentFromFlag(flag), flag).toThrow(message);
      expect(() => agentFromFlag(flag), flag).toThrow(expect.objectContaining({ name: "CliError", options: { code: "USAGE" } }));
    }
  });

  it("--agents-file is a JSON object, taken as written; anything else is a usage error", () => {
    const file = path.join(tmp, "agents.json");
    const agents = { coder: { kind: "command", id: "c", argv: ["node", "a.js"] }, whatever: 1 };
    fs.writeFileSync(file, JSON.stringify(agents));
    expect(agentsFromFile(file)).toEqual(agents);
    for (const json of ["[]", "null", "3", '"coder"']) {
      fs.writeFileSync(file, json);
      expect(() => agentsFromFile(file), json).toThrow(/write a JSON object of role → agent config/);
    }
  });
});

describe("catcafe forge new --gates", () => {
  it("names stages, comma-separated, or none", () => {
    expect(gates("prd, plan,delivery")).toEqual(["prd", "plan", "delivery"]);
    expect(gates("none")).toEqual([]);
    expect(gates("")).toEqual([]);
  });

  it("a name that is no stage is a usage error listing the stages", () => {
    for (const value of ["prd,review", "PRD", "none,prd"])
      expect(() => gates(value), value).toThrow(
        expect.objectContaining({
          message: expect.stringContaining("idea, prd, design, plan, coding, check, delivery"),
          options: { code: "USAGE" },
        }),
      );
  });
});

describe("a setting's value in the CLI's tables (config show, projects show)", () => {
  it("joins a list, shows an object as JSON, a missing value as a dash, anything else as text", () => {
    expect(settingText(["ANTHROPIC_API_KEY", "OPENAI_API_KEY"])).toBe("ANTHROPIC_API_KEY, OPENAI_API_KEY");
    expect(settingText({ provider: "github" })).toBe('{"provider":"github"}');
    expect(settingText(undefined)).toBe("—");
    expect(settingText(600000)).toBe("600000");
    expect(settingText(false)).toBe("false");
  });
});
