// Secrets never live in configuration files (req M3, N4): a file names the environment
// variable that holds a key (`apiKeyEnv`), never the key. This module spots values that
// look like keys and fields that would hold them, and scrubs anything key-like from a
// snapshot before it is recorded. Messages never repeat the secret itself.

/** Token shapes of well-known providers, matched anywhere in a value (`--api-key=sk-...`). */
const KNOWN_SECRET_SHAPES: readonly RegExp[] = [
  /(?:^|[^A-Za-z0-9])sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}/, // OpenAI, Anthropic, Stripe-like
  /(?:^|[^A-Za-z0-9])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/, // GitHub
  /github_pat_[A-Za-z0-9_]{20,}/,
  /(?:^|[^A-Za-z0-9])glpat-[A-Za-z0-9_-]{16,}/, // GitLab
  /(?:^|[^A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
  /(?:^|[^A-Za-z0-9])AKIA[0-9A-Z]{16}(?![0-9A-Z])/, // AWS access key id
  /(?:^|[^A-Za-z0-9])AIza[0-9A-Za-z_-]{30,}/, // Google API key
  /(?:^|[^A-Za-z0-9])hf_[A-Za-z0-9]{30,}/, // Hugging Face
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /(?:^|[^A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, // JWT
  /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/i,
  /:\/\/[^/\s:@]+:[^/\s@]+@/, // credentials inside a URL
];

/** True when `value` contains something shaped like an API key, token or private key. */
export function looksLikeSecret(value: string): boolean {
  return KNOWN_SECRET_SHAPES.some((re) => re.test(value));
}

/**
 * True when a value given where an environment variable NAME belongs is rather a key:
 * a known token shape, or one long run of mixed letters and digits (names are words).
 */
export function looksLikeKeyValue(value: string): boolean {
  if (looksLikeSecret(value)) return true;
  const compact = /^[A-Za-z0-9_+/=.-]{20,}$/.test(value);
  const mixed = /[a-z]/.test(value) && /[A-Z]/.test(value) && /[0-9]/.test(value);
  return compact && mixed && !/^[A-Z][A-Z0-9_]*$/.test(value);
}

/** Field names that would hold a secret itself rather than the name of a variable. */
const SECRET_FIELD =
  /^(?:api[-_]?key|apikey|api[-_]?token|access[-_]?token|auth[-_]?token|token|secret|client[-_]?secret|password|passwd|private[-_]?key|access[-_]?key|secret[-_]?key|bearer)$/i;
/** Environment variable names whose value is a secret (`OPENAI_API_KEY`, `GH_TOKEN`). */
const SECRET_ENV_NAME = /(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(?:_|$)/i;

export interface SecretFinding {
  path: Array<string | number>;
  message: string;
}

const ROTATE = "remove it from the file and rotate it (it may already be in git history)";

/**
 * Every place in a parsed file that holds a secret: values shaped like keys, fields named
 * like `apiKey`, and literal values of secret-named variables in an `env` map. Each
 * finding's message explains where the secret belongs instead.
 */
export function findSecrets(value: unknown, path: Array<string | number> = []): SecretFinding[] {
  const findings: SecretFinding[] = [];
  const key = path.at(-1);
  const parentKey = path.at(-2);
  if (typeof value === "string") {
    // envFrom maps a variable to the NAME of the runner's variable holding its value.
    if ((key === "apiKeyEnv" || parentKey === "envFrom") && value !== "" && looksLikeKeyValue(value)) {
      findings.push({
        path,
        message: `must be the NAME of an environment variable (like OPENAI_API_KEY), but this value looks like an API key itself: ${ROTATE}`,
      });
    } else if (parentKey === "envFrom") {
      return findings;
    } else if (typeof key === "string" && SECRET_FIELD.test(key) && value !== "") {
      findings.push({
        path,
        message: `secrets must not be stored in configuration files: put the key in an environment variable and name that variable in "apiKeyEnv" (or "passEnv" for a shell); ${ROTATE}`,
      });
    } else if (parentKey === "env" && typeof key === "string" && SECRET_ENV_NAME.test(key) && value !== "") {
      // An MCP server names the runner's variable in envFrom; a shell lists it in passEnv.
      const instead = path.includes("mcpServers")
        ? `map "${key}" to the runner's variable holding it in "envFrom"`
        : `list "${key}" in "passEnv"`;
      findings.push({
        path,
        message: `a literal value for the secret variable ${key} is not allowed: ${instead} so the runner passes it from its own environment; ${ROTATE}`,
      });
    } else if (looksLikeSecret(value)) {
      findings.push({
        path,
        message: `looks like a secret (an API key or token): never store secrets in configuration files, keep them in environment variables; ${ROTATE}`,
      });
    }
    return findings;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => findings.push(...findSecrets(item, [...path, i])));
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) findings.push(...findSecrets(v, [...path, k]));
  }
  return findings;
}

export const REDACTED = "[redacted]";

/**
 * A deep copy with every secret-looking string replaced by `[redacted]` and every field
 * named like a secret emptied, for snapshots that go into events. Environment variable
 * NAMES (apiKeyEnv, passEnv, an MCP server's envFrom) are kept: they are what makes a run
 * reproducible.
 */
export function redactSecrets<T>(value: T): T {
  const walk = (v: unknown, key: string | undefined, parentKey: string | undefined): unknown => {
    if (typeof v === "string") {
      const names = key === "apiKeyEnv" || parentKey === "envFrom";
      if (key !== undefined && !names && SECRET_FIELD.test(key)) return REDACTED;
      return looksLikeSecret(v) ? REDACTED : v;
    }
    if (Array.isArray(v)) return v.map((item) => walk(item, undefined, key));
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, walk(inner, k, key)]));
    }
    return v;
  };
  return walk(value, undefined, undefined) as T;
}
