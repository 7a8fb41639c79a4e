// GET /api/sessions/:id/state — the session's state document (req M10: workflow, state,
// iteration, stage, roles, the step in progress, budget, outcome, fork); viewer role
// (server/api/rest.ts, server/sessions/state-document.ts).
import { sessionStateHandler } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = sessionStateHandler;
