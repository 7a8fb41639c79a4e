// The environment of an allowlisted command (req N4), built from nothing: a fixed base
// plus the extra variables a project configures. Nothing is inherited from the server's
// own environment except PATH, so DATABASE_URL, NEXTAUTH_SECRET and API keys never leak.
import os from "node:os";
import { z } from "zod";
import { looksSecret, minimalEnv } from "../process/env";

const RESERVED_NAMES = new Set(["PATH", "HOME", "LANG", "LC_ALL", "CI", "NO_COLOR", "TERM", "TMPDIR", "TMP", "TEMP"]);

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
      // Refused even when a project passes them on purpose.
      else if (looksSecret(name))
        ctx.addIssue({ code: "custom", path: [name], message: `${name} looks like a secret; secrets never reach commands` });
    }
  });
export type ExtraEnv = z.infer<typeof ZExtraEnv>;

export function buildCommandEnv(options: { home: string; tmp?: string; extra?: ExtraEnv }): Record<string, string> {
  return minimalEnv({
    home: options.home,
    tmp: options.tmp ?? os.tmpdir(),
    extra: { LC_ALL: "C.UTF-8", CI: "1", ...ZExtraEnv.parse(options.extra ?? {}) },
  });
}
