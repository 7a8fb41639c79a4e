// POST /api/hooks/github — the github webhook receiver (docs/intake.md; server/intake/receive.ts).
import { hookHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = hookHandlers.github;
