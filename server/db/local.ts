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

export async function openLocalDatabase(log: (line: string) => void): Promise<LocalDatabase> {
  if (process.env.DATABASE_URL) {
    return { url: process.env.DATABASE_URL, embedded: false, stop: async () => {} };
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
