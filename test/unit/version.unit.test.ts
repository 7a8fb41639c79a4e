// The version reported by /api/health and runner registrations is the package's version.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { APP_VERSION } from "../../server/version";

describe("APP_VERSION", () => {
  it("equals the version in package.json", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8")) as { version: string };
    expect(APP_VERSION).toBe(pkg.version);
  });
});
