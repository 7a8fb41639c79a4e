// GET /api/projects/:id/agent-record?since=&until= — the project's agent record as JSON
// (per coder agent and model: tasks, approval rate, medians, bake-offs and choices); viewer
// role (server/api/rest.ts, server/agent-record/record.ts, docs/bake-off.md).
import { agentRecordHandler } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = agentRecordHandler;
