// GET /api/health: 200 with the live runners (how many, and whether each runs agents sandboxed)
// when the database answers, 503 when not.
import { getWebPool } from "@/server/db/web-pool";
import { describeDbError, getHealth, type Health } from "@/server/health";
import { APP_VERSION } from "@/server/version";

export const dynamic = "force-dynamic";

const NO_STORE = { "Cache-Control": "no-store, max-age=0" };

export async function GET(): Promise<Response> {
  let health: Health;
  try {
    health = await getHealth(getWebPool());
  } catch (err) {
    // getWebPool throws when DATABASE_URL is missing or malformed.
    health = { ok: false, db: "down", runners: 0, liveRunners: [], version: APP_VERSION, error: describeDbError(err) };
  }
  return Response.json(health, { status: health.ok ? 200 : 503, headers: NO_STORE });
}
