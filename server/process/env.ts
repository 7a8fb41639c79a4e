// The environment a child process starts with, built from nothing: a fixed base (PATH, HOME,
// locale, a dumb terminal) plus what the caller adds on purpose. Nothing of the server's own
// environment is inherited except PATH, and the server's secrets are removed last whatever
// the caller added, so DATABASE_URL, NEXTAUTH_SECRET and ADMIN_PASSWORD never reach a child
// (req N4). The one fallback PATH and the one test for secret-looking names live here.
import path from "node:path";

/** Where variables are read: process.env, or a stand-in for it. */
export type EnvSource = Readonly<Record<string, string | undefined>>;

/** PATH when the server has none. */
export const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Variables of the web server and runner that no child process may ever receive (req N4). */
export const SERVER_SECRET_ENV = ["DATABASE_URL", "NEXTAUTH_SECRET", "ADMIN_PASSWORD"] as const;
export type ServerSecretName = (typeof SERVER_SECRET_ENV)[number];

/**
 * The server's secrets a runner never uses: the web server's session key and the first
 * admin's password. `npm start` does not pass them to its runner; a runner started with them
 * takes them out of its environment first thing (server/runner/withhold-secrets.ts).
 */
export const WEB_ONLY_SECRET_ENV = ["NEXTAUTH_SECRET", "ADMIN_PASSWORD"] as const satisfies readonly ServerSecretName[];

/** Secret values this process took out of its environment, or knows from elsewhere: still redacted. */
const withheld: Array<[ServerSecretName, string]> = [];

/**
 * Takes `names` out of `env` (this process's environment), so that no code of this process
 * reads them and no child inherits them, and keeps their values, with `alsoRedact`'s (the
 * same secrets known from elsewhere), for redactServerSecrets only. Returns the names that
 * were set. What the process was started with stays in /proc/<pid>/environ whatever it does
 * later: the launcher must not pass them (scripts/lib/child-env.ts).
 */
export function withholdServerSecrets(
  names: readonly ServerSecretName[],
  options: { env?: Record<string, string | undefined>; alsoRedact?: Partial<Record<ServerSecretName, string>> } = {},
): ServerSecretName[] {
  const env = options.env ?? process.env;
  const found: ServerSecretName[] = [];
  for (const name of names) {
    const value = env[name];
    if (value === undefined) continue;
    found.push(name);
    if (value) withheld.push([name, value]);
    delete env[name];
  }
  for (const name of SERVER_SECRET_ENV) {
    const value = options.alsoRedact?.[name];
    if (value) withheld.push([name, value]);
  }
  return found;
}

/** Names that hold secrets by convention (refused where a project configures variables for commands). */
const SECRET_NAME =
  /DATABASE_URL|NEXTAUTH|SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIAL|^PG|^AWS_|^AZURE_|^GOOGLE_APPLICATION/i;

export function looksSecret(name: string): boolean {
  return SECRET_NAME.test(name);
}

export function isServerSecret(name: string): boolean {
  return (SERVER_SECRET_ENV as readonly string[]).includes(name);
}

/**
 * `text` with every value of the server's own secrets (in `source`, or withheld from this
 * process's environment: withholdServerSecrets) and the password inside DATABASE_URL
 * replaced by `[redacted NAME]`, and how many were replaced: output of agents
 * and test commands is scanned with it before it is recorded, whatever channel a value
 * leaked through. Values shorter than 8 characters are left alone (they would match noise).
 */
export function redactServerSecrets(text: string, source: EnvSource = process.env): { text: string; redactions: number } {
  const values: Array<[string, string]> = [];
  for (const name of SERVER_SECRET_ENV) {
    const value = source[name];
    if (value && value.length >= 8) values.push([name, value]);
  }
  for (const [name, value] of withheld) if (value.length >= 8) values.push([name, value]);
  try {
    const password = source.DATABASE_URL ? decodeURIComponent(new URL(source.DATABASE_URL).password) : "";
    if (password.length >= 8) values.push(["the database password", password]);
  } catch {
    // not a URL: the whole value is covered above
  }
  let redactions = 0;
  let out = text;
  // Longest first, so a password inside DATABASE_URL does not break the URL's own match.
  for (const [name, value] of values.sort((a, b) => b[1].length - a[1].length)) {
    const parts = out.split(value);
    redactions += parts.length - 1;
    out = parts.join(`[redacted ${name}]`);
  }
  return { text: out, redactions };
}

/** NUL and UTF-16 surrogates without their other half: what PostgreSQL's text and jsonb cannot hold. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what must go
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Output of an agent or a command as it may be recorded: the server's secrets redacted
 * (redactServerSecrets) and what the database cannot store (a NUL byte — `/proc/<pid>/environ`
 * and binary files are full of them — or a broken surrogate) replaced by U+FFFD, so that such
 * output is recorded rather than failing the step's every attempt.
 */
export function recordableOutput(text: string, source: EnvSource = process.env): { text: string; redactions: number } {
  const redacted = redactServerSecrets(text, source);
  return { text: redacted.text.replace(UNSTORABLE, "\uFFFD"), redactions: redacted.redactions };
}

/**
 * The variables a brain's `apiKeyEnv` may name: CATCAFE_BRAIN_KEY_ENV, comma-separated
 * patterns (`*` matches any run of characters), by default `*_API_KEY`. A repository
 * chooses its brains' endpoints, so it must not be able to name any variable of the
 * server's; the server's own secrets are refused whatever this says.
 */
export function brainKeyEnvAllowlist(source: EnvSource = process.env): string[] {
  const patterns = (source.CATCAFE_BRAIN_KEY_ENV ?? "*_API_KEY")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => /^[A-Za-z0-9_*]+$/.test(p));
  return patterns.length ? patterns : ["*_API_KEY"];
}

/**
 * Why `name` may not be read as a brain's API key, or null when it may: it must match one of
 * `patterns` (the admin's allowlist, `*` a wildcard) and never be one of the server's secrets.
 */
export function keyEnvRefusal(name: string, patterns: readonly string[]): string | null {
  if (isServerSecret(name)) return `${name} is one of the server's own secrets and is never sent to a brain`;
  const allowed = patterns.some((p) => new RegExp(`^${p.split("*").map(escapeRegExp).join(".*")}$`).test(name));
  return allowed ? null : `${name} is not allowed as a brain's key (allowed: ${patterns.join(", ")}; settings.json brainKeyEnv)`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * PATH for children: the server's PATH, with the running Node's directory added at the end
 * when it is missing, so that `#!/usr/bin/env node` scripts (the agent CLIs, npm) find a Node.
 */
export function childPath(source: EnvSource = process.env): string {
  const dirs = (source.PATH || FALLBACK_PATH).split(path.delimiter);
  const nodeDir = path.dirname(process.execPath);
  return dirs.includes(nodeDir) ? dirs.join(path.delimiter) : [...dirs, nodeDir].join(path.delimiter);
}

export interface MinimalEnvOptions {
  /** HOME of the child (a directory of its own for untrusted code). */
  home: string;
  /** Its temporary directory (TMPDIR, TMP, TEMP): one of the run's own, removed with it. */
  tmp?: string;
  /** `C.UTF-8` by default; git is run with `C` so its messages stay parseable. */
  locale?: "C.UTF-8" | "C";
  /** Names copied from the server's environment when set there (e.g. a provider key the config names). */
  pass?: readonly string[];
  /** Literal variables, added last (before the secrets are removed). */
  extra?: Record<string, string>;
  /** Where PATH and `pass` are read (default: this process's environment). */
  source?: EnvSource;
}

export function minimalEnv(options: MinimalEnvOptions): Record<string, string> {
  const source = options.source ?? process.env;
  const locale = options.locale ?? "C.UTF-8";
  const env: Record<string, string> = {
    PATH: childPath(source),
    HOME: options.home,
    LANG: locale,
    TERM: "dumb",
    NO_COLOR: "1",
    ...(options.tmp ? { TMPDIR: options.tmp, TMP: options.tmp, TEMP: options.tmp } : {}),
  };
  for (const name of options.pass ?? []) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, options.extra);
  for (const name of SERVER_SECRET_ENV) delete env[name];
  return env;
}
