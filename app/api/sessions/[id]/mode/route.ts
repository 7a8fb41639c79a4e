// GET / PUT /api/sessions/:id/mode — a conversation's collaboration mode (req C7; GET viewer,
// PUT operator `{ mode, modeConfig? }`; server/api/rest.ts).
import { modeRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = modeRestHandlers.getSessionMode;
export const PUT = modeRestHandlers.setSessionMode;
