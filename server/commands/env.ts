// The environment of an allowlisted command (req N4), built from nothing: a fixed base
// plus the extra variables a project configures. Nothing is inherited from the server's
// own environment except PATH, so DATABASE_URL, NEXTAUTH_SECRET and API keys never leak.
import os from "node:os";
import path from "node:path";
import { z } from "zod";

const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const RESERVED_NAMES = new Set(["PATH", "HOME", "LANG", "LC_ALL", "CI", "NO_COLOR", "TERM", "TMPDIR"]);
/** Names that hold secrets by convention; refused even when a project passes them on purpose. */
const SECRET_NAME =
  /DATABASE_URL|NEXTAUTH|SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIAL|^PG|^AWS_|^AZURE_|^GOOGLE_APPLICATION/i;

export const ZExtraEnv = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"),
    z
      .string()
      .max(10_000)
      .refine((value) => !value.includes("\0"), "no NUL bytes"),
  )
  .superRefine((env, ctx) => {
    for (const name of Object.keys(env)) {
      if (RESERVED_NAMES.has(name))
        ctx.addIssue({ code: "custom", path: [name], message: `${name} is set by the runner and cannot be overridden` });
      else if (SECRET_NAME.test(name))
        ctx.addIssue({ code: "custom", path: [name], message: `${name} looks like a secret; secrets never reach commands` });
    }
  });
export type ExtraEnv = z.infer<typeof ZExtraEnv>;

/** PATH for commands: the server's PATH, with the running Node's directory first. */
function commandPath(): string {
  const inherited = process.env.PATH ?? FALLBACK_PATH;
  const nodeDir = path.dirname(process.execPath);
  return inherited.split(path.delimiter).includes(nodeDir) ? inherited : `${nodeDir}${path.delimiter}${inherited}`;
}

export function buildCommandEnv(options: { home: string; extra?: ExtraEnv }): Record<string, string> {
  return {
    PATH: commandPath(),
    HOME: options.home,
    TMPDIR: os.tmpdir(),
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    CI: "1",
    NO_COLOR: "1",
    TERM: "dumb",
    ...ZExtraEnv.parse(options.extra ?? {}),
  };
}
