// One production build of the web app for every end-to-end test that runs `npm start`:
// built when missing or stale, under a lock file so parallel test files never build at once.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { buildFingerprint, buildIsCurrent, writeBuildStamp } from "../../scripts/lib/build";

const ROOT = path.resolve(import.meta.dirname, "../..");
const LOCK = path.join(ROOT, ".next-build.lock");
const STALE_LOCK_MS = 10 * 60_000;
export const WEB_BUILD_TIMEOUT_MS = 240_000;

export async function ensureWebBuild(): Promise<void> {
  if (buildIsCurrent(ROOT)) return;
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = fs.openSync(LOCK, "wx");
    } catch {
      const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) fs.rmSync(LOCK, { force: true });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    if (buildIsCurrent(ROOT)) return; // another test file built it while we waited
    const fingerprint = buildFingerprint(ROOT);
    try {
      execFileSync(path.join(ROOT, "node_modules/.bin/next"), ["build"], {
        cwd: ROOT,
        env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
        stdio: "pipe",
        timeout: WEB_BUILD_TIMEOUT_MS,
      });
    } catch (err) {
      const { stdout, stderr } = err as { stdout?: Buffer; stderr?: Buffer };
      throw new Error(`next build failed:\n${`${stdout ?? ""}${stderr ?? ""}`.slice(-4000)}`, { cause: err });
    }
    writeBuildStamp(ROOT, fingerprint);
  } finally {
    fs.closeSync(fd);
    fs.rmSync(LOCK, { force: true });
  }
}
