// The environment a child process starts with, built from nothing: a fixed base (PATH, HOME,
// locale, a dumb terminal) plus what the caller adds on purpose. Nothing of the server's own
// environment is inherited except PATH, and the server's secrets are removed last whatever
// the caller added, so DATABASE_URL, NEXTAUTH_SECRET and ADMIN_PASSWORD never reach a child
// (req N4). The one fallback PATH and the one test for secret-looking names live here.
import path from "node:path";
import { SERVER_SECRET_ENV, noteHandedSecret, redactKnownSecrets } from "../redact";

export {
  SERVER_SECRET_ENV,
  WEB_ONLY_SECRET_ENV,
  knownSecretValues,
  noteHandedSecret,
  redactKnownSecrets,
  redactedJson,
  withholdServerSecrets,
  type ServerSecretName,
} from "../redact";

/** Where variables are read: process.env, or a stand-in for it. */
export type EnvSource = Readonly<Record<string, string | undefined>>;

/** PATH when the server has none. */
export const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

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
 * Sign-in and client secrets of the web server and the CLI (docs/auth.md): never handed to an
 * agent, whatever an admin's list of variables says.
 */
export const AUTH_SECRET_ENV = ["GITHUB_SECRET", "OIDC_CLIENT_SECRET", "CATCAFE_TOKEN"] as const;

/** NUL and UTF-16 surrogates without their other half: what PostgreSQL's text and jsonb cannot hold. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what must go
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Output of an agent or a command as it may be recorded: the server's secrets redacted
 * (redactKnownSecrets) and what the database cannot store (a NUL byte — `/proc/<pid>/environ`
 * and binary files are full of them — or a broken surrogate) replaced by U+FFFD, so that such
 * output is recorded rather than failing the step's every attempt.
 */
export function recordableOutput(text: string, source: EnvSource = process.env): { text: string; redactions: number } {
  const redacted = redactKnownSecrets(text, source);
  return { text: redacted.text.replace(UNSTORABLE, "\uFFFD"), redactions: redacted.redactions };
}

/** What an agent may receive from the runner's environment (settings access.agentEnv, docs/security.md). */
export interface AgentEnvPolicy {
  /** The admin's list: names, `*` matching any run of characters. */
  allowed: readonly string[];
  /** Names never handed whatever the list says besides the server's and sign-in secrets: the delivery token variables. */
  never?: readonly string[];
}

/**
 * Why `name` may not be handed to an agent (passEnv, a CLI's or a brain's apiKeyEnv), or null
 * when it may: it must be on the admin's list and never one of the server's secrets, a
 * sign-in secret or a delivery token. The one rule validation and the runner both apply.
 */
export function agentEnvRefusal(name: string, policy: AgentEnvPolicy): string | null {
  if (isServerSecret(name)) return `${name} is one of the server's own secrets and is never handed to an agent`;
  if ((AUTH_SECRET_ENV as readonly string[]).includes(name)) return `${name} is a sign-in secret and is never handed to an agent`;
  if (policy.never?.includes(name)) return `${name} holds the delivery token and is never handed to an agent`;
  const allowed = policy.allowed.some((p) => new RegExp(`^${p.split("*").map(escapeRegExp).join(".*")}$`).test(name));
  return allowed
    ? null
    : `${name} is not on the admin's list of variables agents may receive (settings access.agentEnv: ${policy.allowed.join(", ") || "empty"})`;
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
    if (value === undefined) continue;
    env[name] = value;
    noteHandedSecret(name, value);
  }
  Object.assign(env, options.extra);
  for (const name of SERVER_SECRET_ENV) delete env[name];
  return env;
}
