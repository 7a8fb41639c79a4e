// The web server's /api/metrics (docs/operations.md, "Metrics"): this process's families,
// plus what only the database knows, read at scrape time: the steps queue (all runners), the
// usage totals (tokens and cost by project and model), this process's live subscribers and
// its pool. The access rule is server/metrics/access.ts: here only a bearer of
// CATCAFE_METRICS_TOKEN, since the web server knows a client's address only as the request
// claims it (X-Forwarded-For).
import type pg from "pg";
import type { PricingSettings } from "../config/schemas";
import { parseEnv, ZMetricsEnv } from "../env";
import { metricsAccess } from "../metrics/access";
import { attachScrapeSources, metricsText } from "../metrics/registry";
import { fileSettings } from "../projects/config-edits";
import { stepsQueueDepth } from "../runner/steps-projection";
import { sessionEventsListener } from "../sessions/view/listener";
import { usageTotals } from "../usage/totals";

export interface WebMetricsOptions {
  /** The environment CATCAFE_METRICS_TOKEN is read from (default process.env). */
  env?: Record<string, string | undefined>;
  /** The price table costs are priced with (default: the settings'). */
  pricing?: () => PricingSettings;
}

/** The scrape sources of a web process whose pool is `pool`. */
export function attachWebScrapeSources(pool: pg.Pool, pricing: () => PricingSettings = () => fileSettings().pricing): void {
  attachScrapeSources({
    queue: () => stepsQueueDepth(pool),
    usage: () => usageTotals(pool, pricing()),
    subscribers: () => sessionEventsListener(pool).size,
    pools: { web: pool },
  });
}

/** GET /api/metrics: the families in Prometheus' text format, or the refusal (401, 403). */
export async function metricsResponse(request: Request, pool: () => pg.Pool, options: WebMetricsOptions = {}): Promise<Response> {
  const headers = { "Cache-Control": "no-store", "Content-Type": "text/plain; charset=utf-8" };
  let token: string | undefined;
  try {
    token = parseEnv(ZMetricsEnv, options.env ?? process.env).CATCAFE_METRICS_TOKEN;
  } catch (err) {
    // A malformed token refuses every scrape, saying which variable (never its value).
    return new Response(`${(err as Error).message}\n`, { status: 500, headers });
  }
  const access = metricsAccess({ authorization: request.headers.get("authorization"), address: null }, token);
  if (!access.ok) return new Response(`${access.message}\n`, { status: access.status, headers });
  attachWebScrapeSources(pool(), options.pricing);
  const { contentType, body } = await metricsText();
  return new Response(body, { status: 200, headers: { ...headers, "Content-Type": contentType } });
}
