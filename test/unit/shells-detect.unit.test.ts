// Reading what detection needs from a CLI: its version (from the recorded `--version`
// outputs of the real CLIs), the supported range, and its capabilities from the recorded
// `--help` texts; a help text that lost a flag is reported by name.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { capabilitiesFromHelp, parseVersion, SUPPORTED_VERSION_RANGES, versionProblem } from "../../server/agents/shells/detect";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/shells");
const read = (shell: string, file: string) => fs.readFileSync(path.join(FIXTURES, shell, file), "utf8");

describe("version", () => {
  it.each([
    ["claude", "2.1.330"],
    ["codex", "0.169.0"],
    ["gemini", "0.61.0"],
  ] as const)("reads %s's --version output and finds it supported", (shell, version) => {
    expect(parseVersion(read(shell, "version.txt"))).toBe(version);
    expect(versionProblem(version, SUPPORTED_VERSION_RANGES[shell])).toBeNull();
  });

  it("reads prefixed and pre-release versions; none when there is none", () => {
    expect(parseVersion("codex-cli v0.170.0-alpha.2\n")).toBe("0.170.0-alpha.2");
    expect(parseVersion("Gemini CLI")).toBeNull();
  });

  it("says why a version is outside the range, or the range is invalid", () => {
    expect(versionProblem("1.0.128", ">=2.0.0 <3.0.0")).toBe("version 1.0.128 is outside the supported range >=2.0.0 <3.0.0");
    expect(versionProblem("3.0.0", SUPPORTED_VERSION_RANGES.claude)).toMatch(/outside/);
    expect(versionProblem("0.61.0", "^0.61.0 || ^0.62.0")).toBeNull();
    expect(versionProblem("1.0.0", "not a range")).toMatch(/not a valid version range/);
  });
});

describe("capabilities from --help", () => {
  it.each(["claude", "codex", "gemini"] as const)("%s's recorded help offers everything the adapter uses", (shell) => {
    expect(capabilitiesFromHelp(shell, read(shell, "help.txt"))).toEqual({
      capabilities: { nonInteractive: true, editFiles: true, workingDirectory: true },
      missing: [],
    });
  });

  it("a help text without a flag loses that capability and names the flag", () => {
    const help = read("codex", "help.txt").replaceAll("--json", "--jsonl").replaceAll("workspace-write", "");
    const found = capabilitiesFromHelp("codex", help);
    expect(found.capabilities).toEqual({ nonInteractive: false, editFiles: false, workingDirectory: true });
    expect(found.missing).toEqual(["--json", "workspace-write"]);
  });

  it("a flag is matched as a whole word", () => {
    expect(capabilitiesFromHelp("codex", "--cdx --jsonish").missing).toContain("--cd");
    expect(capabilitiesFromHelp("codex", "--cdx --jsonish").missing).toContain("--json");
  });
});
