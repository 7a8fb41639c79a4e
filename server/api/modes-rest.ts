// The collaboration-mode endpoints (req C7) — `GET /api/modes`,
// `GET /api/sessions/:id/mode`, `PUT /api/sessions/:id/mode` — reserved until collaboration
// modes exist: signed-in callers get 501 with a JSON error saying so (after the same sign-in
// and role checks the real endpoints will make), never a 404 that looks like a wrong URL.
import { hasRole, type Role } from "../../lib/roles";
import type { CurrentUser } from "../auth/request";

const NO_STORE = { "Cache-Control": "no-store" };

export const MODES_NOT_IMPLEMENTED =
  "collaboration modes (free_discussion, sop, voting, expert_routing; SPEC C) are not built yet: GET /api/modes, GET /api/sessions/:id/mode and PUT /api/sessions/:id/mode will answer here once they are";

type Authenticate = (req: Request) => Promise<CurrentUser | null>;

/** The REST aliases' error shape; NOT_IMPLEMENTED is this file's own code. */
function errorResponse(status: number, code: string, message: string): Response {
  const headers: Record<string, string> = { ...NO_STORE };
  if (status === 401) headers["WWW-Authenticate"] = 'Bearer realm="catcafe"';
  return Response.json({ error: { code, message } }, { status, headers });
}

function placeholder(authenticate: Authenticate, role: Role) {
  return async (req: Request): Promise<Response> => {
    const user = await authenticate(req);
    if (!user) return errorResponse(401, "UNAUTHORIZED", "sign in, or send an API token as `Authorization: Bearer ...`");
    if (!hasRole(user.role, role)) return errorResponse(403, "FORBIDDEN", `this needs the ${role} role (you are ${user.role})`);
    return errorResponse(501, "NOT_IMPLEMENTED", MODES_NOT_IMPLEMENTED);
  };
}

export function createModesPlaceholderHandlers(authenticate: Authenticate) {
  return {
    /** GET /api/modes (viewer) */
    listModes: placeholder(authenticate, "viewer"),
    /** GET /api/sessions/:id/mode (viewer) */
    getSessionMode: placeholder(authenticate, "viewer"),
    /** PUT /api/sessions/:id/mode `{ mode, modeConfig? }` (operator) */
    setSessionMode: placeholder(authenticate, "operator"),
  };
}
