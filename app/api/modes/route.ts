// GET /api/modes — the collaboration-mode registry (req C7; viewer; server/api/rest.ts).
import { modeRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = modeRestHandlers.listModes;
