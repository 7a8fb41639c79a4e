// GET /api/metrics: Prometheus' text format (docs/operations.md, "Metrics"), for a bearer of
// CATCAFE_METRICS_TOKEN only (unset: every scrape refused).
import { getWebPool } from "@/server/db/web-pool";
import { metricsResponse } from "@/server/api/metrics";

export const dynamic = "force-dynamic";

export function GET(request: Request): Promise<Response> {
  return metricsResponse(request, getWebPool);
}
