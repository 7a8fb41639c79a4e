// The environment of sign-in, parsed once with zod. Every provider is optional, but a
// half-configured one (an id without its secret) fails fast, naming what is missing.
import { z } from "zod";
import { parseEnv } from "../env";
import { ZPassword } from "./passwords";
import { ZEmail } from "./users";

const optional = z.string().trim().min(1).optional();

export const ZAuthEnv = z
  .object({
    NEXTAUTH_SECRET: optional,
    GITHUB_ID: optional,
    GITHUB_SECRET: optional,
    OIDC_ISSUER: z.url().optional(),
    OIDC_CLIENT_ID: optional,
    OIDC_CLIENT_SECRET: optional,
    /** What the sign-in button says for the OIDC provider. */
    OIDC_NAME: z.string().trim().min(1).default("Single sign-on"),
  })
  .superRefine((env, ctx) => {
    const groups: Array<Array<keyof typeof env>> = [
      ["GITHUB_ID", "GITHUB_SECRET"],
      ["OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET"],
    ];
    for (const group of groups) {
      const set = group.filter((k) => env[k] !== undefined);
      if (set.length === 0 || set.length === group.length) continue;
      for (const missing of group.filter((k) => env[k] === undefined)) {
        ctx.addIssue({
          code: "custom",
          path: [missing],
          message: `required when ${set.join(" and ")} ${set.length === 1 ? "is" : "are"} set`,
        });
      }
    }
  });
export type AuthEnv = z.infer<typeof ZAuthEnv>;

/** First admin from the environment (`npm start`): both or neither. */
export const ZAdminEnv = z
  .object({
    ADMIN_EMAIL: ZEmail.optional(),
    ADMIN_PASSWORD: ZPassword.optional(),
    ADMIN_NAME: optional,
  })
  .superRefine((env, ctx) => {
    if (env.ADMIN_EMAIL !== undefined && env.ADMIN_PASSWORD === undefined)
      ctx.addIssue({ code: "custom", path: ["ADMIN_PASSWORD"], message: "required when ADMIN_EMAIL is set" });
    if (env.ADMIN_PASSWORD !== undefined && env.ADMIN_EMAIL === undefined)
      ctx.addIssue({ code: "custom", path: ["ADMIN_EMAIL"], message: "required when ADMIN_PASSWORD is set" });
  });
export type AdminEnv = z.infer<typeof ZAdminEnv>;

let cached: AuthEnv | undefined;

export function authEnv(env: Record<string, string | undefined> = process.env): AuthEnv {
  if (env !== process.env) return parseEnv(ZAuthEnv, env);
  cached ??= parseEnv(ZAuthEnv, env);
  return cached;
}
