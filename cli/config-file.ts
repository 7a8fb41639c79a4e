// Where the CLI keeps the server URL and the API token of `catcafe login`:
// `$CATCAFE_CONFIG`, else `$XDG_CONFIG_HOME/catcafe/config.json`, else
// `~/.config/catcafe/config.json`. The file holds a secret, so it is written 0600 (its
// folder 0700), atomically, and a file others can read is refused rather than used.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { CliError } from "./errors";

export const ZCliConfig = z.object({
  version: z.literal(1),
  url: z.string().min(1),
  token: z.string().startsWith("cc_"),
  /** The token's id, to revoke it on logout (set when the CLI created it). */
  tokenId: z.string().nullable().default(null),
  /** True when `catcafe login` minted the token (so `logout` may revoke it). */
  createdByLogin: z.boolean().default(false),
  user: z.object({ id: z.string(), email: z.string(), name: z.string(), role: z.string() }).nullable().default(null),
  savedAt: z.string(),
});
export type CliConfig = z.output<typeof ZCliConfig>;

export function configPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.CATCAFE_CONFIG) return path.resolve(env.CATCAFE_CONFIG);
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), ".config");
  return path.join(base, "catcafe", "config.json");
}

export function readConfig(file: string): CliConfig | null {
  let text: string;
  try {
    const stat = fs.statSync(file);
    if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
      throw new CliError(
        `${file} can be read by other users (mode ${(stat.mode & 0o777).toString(8)}): run \`chmod 600 ${file}\` or \`catcafe login\` again`,
      );
    }
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON: run \`catcafe login\` again`);
  }
  const parsed = ZCliConfig.safeParse(json);
  if (!parsed.success)
    throw new CliError(`${file} is not a catcafe config (${parsed.error.issues[0]?.message ?? "invalid"}): run \`catcafe login\` again`);
  return parsed.data;
}

export function writeConfig(file: string, config: CliConfig): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = path.join(dir, `.config.${process.pid}.${Date.now()}.tmp`);
  const fd = fs.openSync(temp, "wx", 0o600);
  try {
    fs.writeFileSync(fd, `${JSON.stringify(ZCliConfig.parse(config), null, 2)}\n`);
    fs.fchmodSync(fd, 0o600); // whatever the umask
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
}

export function removeConfig(file: string): boolean {
  try {
    fs.unlinkSync(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}
