// POST /api/sessions/:id/bake-off/judge — REST alias of bakeOffs.judge (operator; see server/api/rest.ts, docs/bake-off.md).
import { taskRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = taskRestHandlers.bakeOffJudge;
