// The layer map holds for the whole tree: every file of server/ belongs to a layer of
// eslint.layers.mjs (an unclassified file would escape the import rules), and the code map in
// docs/architecture.md names every folder and top-level file of server/.
import fs from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- the ESLint config is plain JavaScript without type declarations
import { layerElements } from "../../eslint.layers.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const elements = layerElements as { type: string; pattern: string; mode?: string }[];

function serverFiles(dir = "server"): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return rel === "server/db/generated" ? [] : serverFiles(rel);
    return rel.endsWith(".ts") ? [rel] : [];
  });
}

function layerOf(file: string): string | null {
  for (const e of elements) {
    const glob = e.mode === "file" ? e.pattern : `${e.pattern}/**`;
    if (picomatch(glob)(file)) return e.type;
  }
  return null;
}

describe("the layers of server/", () => {
  it("classify every file", () => {
    const unclassified = serverFiles().filter((f) => layerOf(f) === null);
    expect(unclassified).toEqual([]);
  });

  it("place files where the map says", () => {
    expect(layerOf("server/events/store.ts")).toBe("events");
    expect(layerOf("server/runner/main.ts")).toBe("runner-main");
    expect(layerOf("server/runner/runner.ts")).toBe("runner");
    expect(layerOf("server/errors.ts")).toBe("base");
    expect(layerOf("server/sessions/view/load.ts")).toBe("sessions");
  });

  it("keep the generic workflow engine free of Forge: nothing in server/workflow imports server/forge", () => {
    const forgeImport = /from "(\.\.\/)+forge\//;
    const offending = serverFiles("server/workflow").filter((f) => forgeImport.test(fs.readFileSync(path.join(root, f), "utf8")));
    expect(offending).toEqual([]);
  });

  it("are all named in docs/architecture.md's code map", () => {
    const doc = fs.readFileSync(path.join(root, "docs/architecture.md"), "utf8");
    const map = doc.slice(doc.indexOf("## Where the code is"));
    const names = fs
      .readdirSync(path.join(root, "server"), { withFileTypes: true })
      .map((e) => (e.isDirectory() ? `\`${e.name}/\`` : `\`${e.name}\``))
      .filter((n) => n.endsWith(".ts`") || n.endsWith("/`"));
    const missing = names.filter((n) => !map.includes(n));
    expect(missing).toEqual([]);
  });
});
