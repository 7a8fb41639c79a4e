// GET /api/modes — the collaboration-mode registry (req C7). 501 until collaboration modes
// exist (server/api/modes-rest.ts); viewer role.
import { createModesPlaceholderHandlers } from "@/server/api/modes-rest";
import { createContext } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const handlers = createModesPlaceholderHandlers(async (req) => (await createContext({ req })).user);

export const GET = handlers.listModes;
