// A delivery is a project's only if it carries that project's secret (docs/intake.md): GitHub
// signs the raw body (`X-Hub-Signature-256: sha256=<HMAC-SHA256 hex>`, verified with
// @octokit/webhooks-methods, which compares in constant time); GitLab sends the secret itself
// in `X-Gitlab-Token`, compared here in constant time (digests of equal length).
import crypto from "node:crypto";
import { verify } from "@octokit/webhooks-methods";
import type { IntakeProvider } from "./rules";

export async function verifiedBy(provider: IntakeProvider, secret: string, rawBody: string, headers: Headers): Promise<boolean> {
  if (provider === "github") {
    const signature = headers.get("x-hub-signature-256");
    if (!signature) return false;
    return verify(secret, rawBody, signature).catch(() => false);
  }
  const token = headers.get("x-gitlab-token");
  if (!token) return false;
  const digest = (v: string) => crypto.createHash("sha256").update(v, "utf8").digest();
  return crypto.timingSafeEqual(digest(token), digest(secret));
}

/** Whether the delivery carries a signature or token at all (none: refused before anything is read). */
export function isSigned(provider: IntakeProvider, headers: Headers): boolean {
  return Boolean(headers.get(provider === "github" ? "x-hub-signature-256" : "x-gitlab-token"));
}
