// Who may change what of a project's configuration (docs/auth.md, "Who configures what";
// req X2). An operator wires their team's own work: they add a project, bind its agents per
// role and set its delivery. The access lists (what agents may receive and reach, which
// private hosts the server may call, which variables may hold a delivery token —
// docs/security.md) and everything else stay an admin's, at the server and at each project.
// Judged on the changes a save would record, so the projects.upsert, settings.configureProject
// and settings.revert paths apply the one rule.
import { AppError } from "../errors";
import type { Role } from "../../lib/roles";

export type EditorRole = Role;

/** A change's path, as ConfigChanged records it. */
type ChangePath = ReadonlyArray<string | number>;

/** What an operator may change in a project's record: its agents, its delivery and its intake settings (docs/intake.md). */
export function operatorMayChange(path: ChangePath): boolean {
  return path[0] === "agents" || (path[0] === "settings" && (path[1] === "delivery" || path[1] === "intake"));
}

const touchesAccess = (path: ChangePath) => (path[0] === "settings" && (path[1] === "access" || path.length === 1)) || path[0] === "access";

/**
 * Refuses an operator's save whose changes go beyond their part. A new project (no record
 * before) may be added whole by an operator, as long as it sets no access list.
 */
export function assertMayChange(
  role: EditorRole,
  changes: ReadonlyArray<{ path: ChangePath; from?: unknown; to?: unknown }>,
  options: { projectId: string; creating: boolean },
): void {
  if (role === "admin") return;
  if (role !== "operator") throw new AppError("FORBIDDEN", "only operators and admins change a project's configuration");
  const access = changes.filter((c) => touchesAccess(c.path) && (!options.creating || setsAccess(c)));
  if (access.length)
    throw new AppError(
      "FORBIDDEN",
      `only an admin changes the access lists (settings.access: agentEnv, agentHosts, privateHosts, deliveryTokenEnv — docs/security.md); ` +
        `project ${options.projectId}'s save would change ${access.flatMap(accessPaths).join(", ")}`,
    );
  if (options.creating) return;
  const others = changes.filter((c) => !operatorMayChange(c.path));
  if (others.length)
    throw new AppError(
      "FORBIDDEN",
      `an operator changes a project's agents, delivery and intake settings only (docs/auth.md); ` +
        `${others.map((c) => c.path.join(".")).join(", ")} of project ${options.projectId} is an admin's to change`,
    );
}

/** The lists a change of settings.access sets (its path when it names one already). */
function accessPaths(change: { path: ChangePath; from?: unknown; to?: unknown }): string[] {
  const path = change.path.join(".");
  if (change.path.length !== 2) return [path];
  const keys = (v: unknown) => (typeof v === "object" && v !== null ? Object.keys(v) : []);
  const lists = [...new Set([...keys(change.from), ...keys(change.to)])].sort();
  return lists.length ? lists.map((k) => `${path}.${k}`) : [path];
}

/** Whether a change that adds a whole settings document sets an access list in it. */
function setsAccess(change: { path: ChangePath; to?: unknown }): boolean {
  if (change.path[0] === "settings" && change.path[1] === "access") return true;
  const to = change.to as { access?: unknown } | undefined;
  return change.path.length === 1 && typeof to === "object" && to !== null && to.access !== undefined;
}
