// GET / PUT /api/sessions/:id/mode — a session's collaboration mode (req C7). 501 until
// collaboration modes exist (server/api/modes-rest.ts); GET viewer, PUT operator.
import { createModesPlaceholderHandlers } from "@/server/api/modes-rest";
import { createContext } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const handlers = createModesPlaceholderHandlers(async (req) => (await createContext({ req })).user);

export const GET = handlers.getSessionMode;
export const PUT = handlers.setSessionMode;
