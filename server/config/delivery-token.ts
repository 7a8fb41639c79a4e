// The variable a delivery reads its token from (docs/delivery.md, "Token"): saved through the
// dashboard or the CLI, it must be on the admin's list `access.deliveryTokenEnv` and never one
// of the server's or the sign-in secrets (req X2). The list guards what an operator may point
// a push at: a token goes to the remote they choose, so they may choose only a variable an
// admin set aside for that.
import { AUTH_SECRET_ENV, isServerSecret } from "../process/env";

/** Why `name` may not hold a delivery token, or null when it may. */
export function deliveryTokenProblem(name: string, allowed: readonly string[]): string | null {
  if (isServerSecret(name)) return `${name} is one of the server's own secrets and never a delivery token`;
  if ((AUTH_SECRET_ENV as readonly string[]).includes(name)) return `${name} is a sign-in secret and never a delivery token`;
  if (allowed.some((pattern) => matches(pattern, name))) return null;
  return (
    `${name} is not on the admin's list of delivery token variables ` +
    `(settings access.deliveryTokenEnv: ${allowed.join(", ") || "empty"}); an admin adds it in Settings → Projects`
  );
}

function matches(pattern: string, name: string): boolean {
  const escaped = pattern.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${escaped.join(".*")}$`).test(name);
}
