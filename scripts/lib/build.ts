// Whether the Next.js production build in .next/ is current: a fingerprint of the build's
// inputs (paths, sizes, mtimes — cheap, no reads) is stored beside it after each build.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const BUILD_INPUTS = ["app", "components", "lib", "server", "next.config.ts", "postcss.config.mjs", "package-lock.json", "tsconfig.json"];
const SKIP = new Set(["generated", "node_modules"]);

export function buildFingerprint(root: string): string {
  const hash = crypto.createHash("sha256");
  const visit = (rel: string) => {
    const stat = fs.statSync(path.join(root, rel), { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(path.join(root, rel)).sort()) if (!SKIP.has(name)) visit(path.join(rel, name));
    } else {
      hash.update(`${rel}\0${stat.size}\0${stat.mtimeMs}\n`);
    }
  };
  BUILD_INPUTS.forEach(visit);
  return hash.digest("hex");
}

const stampPath = (root: string) => path.join(root, ".next", "catcafe-build-inputs");

export function buildIsCurrent(root: string): boolean {
  const stamp = stampPath(root);
  return (
    fs.existsSync(path.join(root, ".next", "BUILD_ID")) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === buildFingerprint(root)
  );
}

export function writeBuildStamp(root: string, fingerprint: string): void {
  fs.writeFileSync(stampPath(root), fingerprint);
}
