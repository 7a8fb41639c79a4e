// POST /api/sessions/:id/bake-off/pick — REST alias of bakeOffs.pick (operator; see server/api/rest.ts, docs/bake-off.md).
import { taskRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = taskRestHandlers.bakeOffPick;
