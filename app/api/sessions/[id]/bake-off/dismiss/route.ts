// POST /api/sessions/:id/bake-off/dismiss — REST alias of bakeOffs.dismiss (operator; see server/api/rest.ts, docs/bake-off.md).
import { taskRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = taskRestHandlers.bakeOffDismiss;
