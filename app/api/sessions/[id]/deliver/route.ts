// POST /api/sessions/:id/deliver — REST alias of sessions.deliver (operator; see server/api/rest.ts).
import { taskRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = taskRestHandlers.deliver;
