// What the server knows to be secret, and the one place that redacts it (docs/security.md
// "Credentials"): the values of its own secrets (the environment variables below and the
// password inside DATABASE_URL), and every value this process handed to an agent — a passEnv
// variable, a CLI's or a brain's key, an MCP server's secret — noted as it is handed. Agent
// output, events (server/events/store.ts), blobs, committed files (server/workspaces/changes.ts)
// and log lines (server/log.ts) pass through it before they are recorded, whatever channel a
// value leaked through; each hit becomes `[redacted NAME]`.

/** Where variables are read: process.env, or a stand-in for it. */
type EnvSource = Readonly<Record<string, string | undefined>>;

/** Variables of the web server and runner that no child process may ever receive (req N4). */
export const SERVER_SECRET_ENV = ["DATABASE_URL", "NEXTAUTH_SECRET", "ADMIN_PASSWORD", "CATCAFE_METRICS_TOKEN"] as const;
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
 * same secrets known from elsewhere), for redaction only. Returns the names that were set.
 * What the process was started with stays in /proc/<pid>/environ whatever it does later:
 * the launcher must not pass them (scripts/lib/child-env.ts).
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

/** Values this process handed to an agent (or a brain's request), by value → the variable's name. */
const handed = new Map<string, string>();

/**
 * Notes that `value` (of variable `name`) was handed to an agent process or sent as a brain's
 * key: from now on it is redacted from everything this process records (redactKnownSecrets).
 * Values shorter than 8 characters are left alone (they would match noise).
 */
export function noteHandedSecret(name: string, value: string | undefined): void {
  if (value && value.length >= 8 && !handed.has(value)) handed.set(value, name);
}

/**
 * `text` with every value of the server's own secrets (and the password inside
 * DATABASE_URL), and every value this process handed to an agent (noteHandedSecret),
 * replaced by `[redacted NAME]`, and how many were replaced: output of agents and test
 * commands, events the runner appends, blobs and commits are scanned with it before they
 * are recorded, whatever channel a value leaked through.
 */
export function redactKnownSecrets(text: string, source: EnvSource = process.env): { text: string; redactions: number } {
  let redactions = 0;
  let out = text;
  // Longest first, so a password inside DATABASE_URL does not break the URL's own match.
  for (const { name, value } of knownSecretValues(source)) {
    if (!out.includes(value)) continue;
    const parts = out.split(value);
    redactions += parts.length - 1;
    out = parts.join(`[redacted ${name}]`);
  }
  return { text: out, redactions };
}

let known: { source: EnvSource; handed: number; env: string; values: Array<{ name: string; value: string }> } | undefined;

/** Every value redactKnownSecrets looks for, longest first (computed again only when one was added or the secrets changed). */
export function knownSecretValues(source: EnvSource = process.env): ReadonlyArray<{ name: string; value: string }> {
  const env = [...SERVER_SECRET_ENV.map((n) => source[n] ?? ""), withheld.length].join("\0");
  if (known && known.source === source && known.handed === handed.size && known.env === env) return known.values;
  const values = [...handed].map(([value, name]) => ({ name, value }));
  for (const [name, value] of withheld) if (value.length >= 8) values.push({ name, value });
  for (const name of SERVER_SECRET_ENV) {
    const value = source[name];
    if (value && value.length >= 8) values.push({ name, value });
  }
  try {
    const password = source.DATABASE_URL ? decodeURIComponent(new URL(source.DATABASE_URL).password) : "";
    if (password.length >= 8) values.push({ name: "the database password", value: password });
  } catch {
    // not a URL: the whole value is covered above
  }
  values.sort((a, b) => b.value.length - a.value.length);
  known = { source, handed: handed.size, env, values };
  return values;
}

/**
 * `value` (JSON data: an event's) as JSON text, and whether a secret had to be redacted from
 * it: one JSON.stringify when none is in it (the common case, and the text the caller needs
 * anyway); otherwise every string in it passed through redactKnownSecrets.
 */
export function redactedJson(value: unknown, source: EnvSource = process.env): { json: string; value: unknown; redacted: boolean } {
  const json = JSON.stringify(value) ?? "null";
  const values = knownSecretValues(source);
  if (!values.some((v) => json.includes(v.value) || json.includes(JSON.stringify(v.value).slice(1, -1))))
    return { json, value, redacted: false };
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactKnownSecrets(v, source).text;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [walk(k) as string, walk(inner)]));
    return v;
  };
  const redacted = walk(value);
  return { json: JSON.stringify(redacted), value: redacted, redacted: true };
}
