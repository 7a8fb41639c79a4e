// The real web app for the browser measurements: the production build (made first when the
// code changed since the last one), `next start` on a free port serving the bench database,
// Debian's chromium through playwright-core, and an operator signed in through the sign-in
// form, as a person would.
import crypto from "node:crypto";
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import { buildFingerprint, buildIsCurrent, writeBuildStamp } from "../../scripts/lib/build";
import { createAppEventStore } from "../../server/app-store";
import { createUser } from "../../server/auth/users";
import { createPool } from "../../server/db/pool";
import { PrismaClient } from "../../server/db/generated/client";
import { freePort } from "../../server/net/free-port";
import { sleep } from "./timing";

export const ROOT = path.resolve(import.meta.dirname, "../..");
const NEXT_BIN = path.join(ROOT, "node_modules/.bin/next");
const CHROMIUM = process.env.CATCAFE_CHROMIUM ?? "/usr/bin/chromium";
const READY_TIMEOUT_MS = 60_000;
const BUILD_TIMEOUT_MS = 10 * 60_000;

/** The production build, made first when the code changed since the last one. */
export function ensureBuild(log: (line: string) => void): void {
  if (buildIsCurrent(ROOT)) return;
  log("the code changed since the last build: running `next build` first (minutes)");
  const fingerprint = buildFingerprint(ROOT);
  execFileSync(NEXT_BIN, ["build"], {
    cwd: ROOT,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
    stdio: "ignore",
    timeout: BUILD_TIMEOUT_MS,
  });
  writeBuildStamp(ROOT, fingerprint);
}

export interface RunningWeb {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/** `next start` serving `databaseUrl`, once its health route answers. */
export async function startWeb(databaseUrl: string): Promise<RunningWeb> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NEXTAUTH_SECRET: crypto.randomBytes(32).toString("hex"),
    NEXTAUTH_URL: url,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    CATCAFE_LOG_LEVEL: "warn",
  };
  const child = spawn(NEXT_BIN, ["start", "-p", String(port), "-H", "127.0.0.1"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString("utf8")));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString("utf8")));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited (${child.exitCode}):\n${output.slice(-2000)}`);
    const ok = await fetch(`${url}/api/health`).then(
      (r) => r.status < 500 || r.status === 503,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`next start did not answer within ${READY_TIMEOUT_MS} ms:\n${output.slice(-2000)}`);
    }
    await sleep(200);
  }
  return { url, child, output: () => output, stop };
}

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-sync",
];
const VIEWPORT = { width: 1440, height: 900 };

function chromiumPath(): string {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM} (apt-get install -y chromium, or set CATCAFE_CHROMIUM)`);
  return CHROMIUM;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
}

export interface Credentials {
  email: string;
  password: string;
}

/** A new operator account in the bench database. */
export async function createOperator(databaseUrl: string): Promise<Credentials> {
  const pool = createPool(databaseUrl, 2);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const operator = {
    email: `bench-${crypto.randomBytes(4).toString("hex")}@cats.test`,
    password: crypto.randomBytes(12).toString("hex"),
  };
  try {
    await createUser(
      { prisma, pool, store: createAppEventStore(pool) },
      { ...operator, name: "Bench Operator", role: "operator" },
      { kind: "system", id: "bench" },
    );
  } finally {
    await prisma.$disconnect();
    await pool.end();
  }
  return operator;
}

/** Signs `context` in through the sign-in form; its later pages carry the session cookie. */
export async function signIn(context: BrowserContext, webUrl: string, who: Credentials): Promise<void> {
  const signin = await context.newPage();
  await signin.goto(`${webUrl}/signin?callbackUrl=${encodeURIComponent("/")}`);
  await signin.locator('input[name="email"]').fill(who.email);
  await signin.locator('input[name="password"]').fill(who.password);
  await Promise.all([
    signin.waitForURL((u) => u.pathname === "/", { timeout: 30_000 }),
    signin.getByRole("button", { name: "Sign in" }).click(),
  ]);
  await signin.close();
}

/**
 * The production web app on `databaseUrl`, a new operator signed in to a 1440 × 900 Chromium
 * context: `use` runs with them, and the browser and the server are stopped afterwards.
 * `profile: "persistent"` signs in to a browser profile on disk, as a person's own browser is:
 * besides the HTTP cache it keeps V8's compiled code of scripts seen before (Chrome keeps none
 * in the in-memory profiles playwright's `newContext` makes), so a page opened again starts
 * without compiling the app's scripts anew; the profile is removed afterwards.
 */
export async function withSignedInBrowser<T>(
  databaseUrl: string,
  use: (context: BrowserContext, web: RunningWeb) => Promise<T>,
  { profile = "in-memory" }: { profile?: "in-memory" | "persistent" } = {},
): Promise<T> {
  const operator = await createOperator(databaseUrl);
  const web = await startWeb(databaseUrl);
  const profileDir = profile === "persistent" ? fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-profile-")) : null;
  let close: () => Promise<void> = async () => {};
  try {
    let context: BrowserContext;
    if (profileDir) {
      context = await chromium.launchPersistentContext(profileDir, {
        executablePath: chromiumPath(),
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: VIEWPORT,
      });
      close = () => context.close();
    } else {
      const browser = await launchChromium();
      close = () => browser.close();
      context = await browser.newContext({ viewport: VIEWPORT });
    }
    await signIn(context, web.url, operator);
    return await use(context, web);
  } finally {
    await close().catch(() => {});
    await web.stop();
    if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
  }
}
