// Team roles, weakest first (req U2): viewer reads; operator starts, confirms, reviews and
// cancels; admin also manages configuration, users and tokens. Shared by the server's
// procedure builders and by pages that hide what a role may not do.
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** Whether `role` is at least `required` in the order viewer < operator < admin. */
export function hasRole(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(required);
}
