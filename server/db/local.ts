// Resolves the database for a local process: DATABASE_URL when set, otherwise the
// embedded PostgreSQL under .data/ (started here, stopped by the returned `stop`).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { startEmbeddedPostgres } from "./embedded";

export const DATA_DIR = path.resolve(process.env.CATCAFE_DATA_DIR ?? path.join(import.meta.dirname, "../../.data"));
const SECRETS_FILE = path.join(DATA_DIR, "secrets.json");
const DEFAULT_EMBEDDED_PORT = 54329;
export const EMBEDDED_DATABASE = "catcafe";

export interface LocalSecrets {
  nextauthSecret: string;
  postgresPassword: string;
}

const ZLocalSecrets = z.object({ nextauthSecret: z.string(), postgresPassword: z.string() }).partial();

/**
 * What an earlier `npm start` generated, without creating anything; null when there is none
 * or it cannot be read (a runner under an OS user of its own, as docs/security.md advises).
 */
export function readLocalSecrets(): Partial<LocalSecrets> | null {
  try {
    const parsed = ZLocalSecrets.safeParse(JSON.parse(fs.readFileSync(SECRETS_FILE, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Generated on first run and kept, so sessions and the database survive restarts. */
export function loadOrCreateSecrets(): LocalSecrets {
  fs.mkdirSync(DATA_DIR, { recursive: true, mode: 0o700 });
  if (fs.existsSync(SECRETS_FILE)) {
    return JSON.parse(fs.readFileSync(SECRETS_FILE, "utf8")) as LocalSecrets;
  }
  const secrets: LocalSecrets = {
    nextauthSecret: crypto.randomBytes(32).toString("base64url"),
    postgresPassword: crypto.randomBytes(18).toString("base64url"),
  };
  fs.writeFileSync(SECRETS_FILE, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

export interface LocalDatabase {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export interface OpenLocalDatabaseOptions {
  /**
   * When `npm start` already runs the embedded server on this data directory, connect to it
   * (and leave it running) instead of refusing: a backup is taken while the app runs.
   */
  shareRunning?: boolean;
}

export async function openLocalDatabase(log: (line: string) => void, options: OpenLocalDatabaseOptions = {}): Promise<LocalDatabase> {
  if (process.env.DATABASE_URL) {
    return { url: process.env.DATABASE_URL, embedded: false, stop: async () => {} };
  }
  const running = options.shareRunning ? runningEmbeddedPort() : null;
  if (running !== null) {
    log(`using the embedded PostgreSQL already running on port ${running}`);
    const password = encodeURIComponent(loadOrCreateSecrets().postgresPassword);
    return { url: `postgresql://catcafe:${password}@127.0.0.1:${running}/${EMBEDDED_DATABASE}`, embedded: true, stop: async () => {} };
  }
  const secrets = loadOrCreateSecrets();
  const port = Number(process.env.CATCAFE_PG_PORT ?? DEFAULT_EMBEDDED_PORT);
  const server = await startEmbeddedPostgres({
    dataDir: path.join(DATA_DIR, "pg"),
    port,
    password: secrets.postgresPassword,
    log,
  });
  await server.createDatabase(EMBEDDED_DATABASE);
  return { url: server.urlFor(EMBEDDED_DATABASE), embedded: true, stop: () => server.stop() };
}

/** The port of a live embedded server on DATA_DIR/pg (its postmaster.pid: pid on line 1, port on line 4), or null. */
function runningEmbeddedPort(): number | null {
  const dataDir = path.join(DATA_DIR, "pg");
  let lines: string[];
  try {
    lines = fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n");
  } catch {
    return null;
  }
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return null;
  }
  return port;
}
