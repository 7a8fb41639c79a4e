// Usage and cost (docs/delivery.md, "Usage and cost"): the agent calls and the tokens they
// reported, added up per session (in all, per model, per stage), per project and per day from
// the `agent_usage` projection, priced with the settings' price table when read. The one
// source of these figures: the Usage page and `catcafe usage` read `usageReport`; the session
// page, the Forge page and `forge status`, and summary.json read `sessionUsage`. A model the
// table does not list keeps its tokens in every total and is named in `unpriced`, so a cost is
// never shown as complete when part of it is unknown (a call that reported no tokens has
// nothing to price). Input tokens read from or written to a provider's prompt cache are part of
// the input and priced at the table's cache rates (docs/scaling.md, "Prompt economics").
import { z } from "zod";
import { DEFAULT_CACHE_READ_SHARE, DEFAULT_CACHE_WRITE_SHARE, type PricingSettings } from "../config/schemas";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";

export interface UsageFigures {
  calls: number;
  /** Every input token, the cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens, those read from the prompt cache. */
  cachedInputTokens: number;
  /** Of inputTokens, those written to the prompt cache. */
  cacheCreationInputTokens: number;
  /** What the priced part cost, in the table's currency. */
  cost: number;
  /** Models without a price whose tokens are in the figures ("unknown": the agent named none). */
  unpriced: string[];
}

export interface ModelUsage extends UsageFigures {
  model: string;
}

export interface StageUsage extends UsageFigures {
  stage: string;
}

export interface SessionUsage {
  currency: string;
  total: UsageFigures;
  byModel: ModelUsage[];
  /** A staged workflow's (the Forge pipeline's) calls per stage, in the order first called; empty for any other. */
  byStage: StageUsage[];
}

export interface UsageReport {
  currency: string;
  /** The first day counted (UTC, YYYY-MM-DD); the report runs to today. */
  since: string;
  total: UsageFigures;
  byProject: (UsageFigures & { projectId: string | null; projectName: string | null })[];
  /** Days with usage, newest first. */
  byDay: (UsageFigures & { day: string })[];
}

/** What the projection holds for one group and one model. */
interface UsageRow {
  model: string | null;
  calls: string;
  input_tokens: string;
  output_tokens: string;
  cached_input_tokens: string;
  cache_creation_input_tokens: string;
}

/** The sums every grouped query selects (UsageRow's token columns). */
const SUMS = `count(*) AS calls, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
  sum(cached_input_tokens) AS cached_input_tokens, sum(cache_creation_input_tokens) AS cache_creation_input_tokens`;

export const UNKNOWN_MODEL = "unknown";

/** No calls, no tokens, no cost. */
export const NO_USAGE: UsageFigures = {
  calls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  cacheCreationInputTokens: 0,
  cost: 0,
  unpriced: [],
};

/** The cost of `tokens` at per-million `prices`: uncached input at the input rate, cache reads and writes at theirs. */
export function costOf(
  tokens: Pick<UsageFigures, "inputTokens" | "outputTokens" | "cachedInputTokens" | "cacheCreationInputTokens">,
  price: PricingSettings["models"][string],
): number {
  const read = price.cacheReadPerMillion ?? price.inputPerMillion * DEFAULT_CACHE_READ_SHARE;
  const write = price.cacheWritePerMillion ?? price.inputPerMillion * DEFAULT_CACHE_WRITE_SHARE;
  const uncached = Math.max(0, tokens.inputTokens - tokens.cachedInputTokens - tokens.cacheCreationInputTokens);
  return roundCost(
    (uncached * price.inputPerMillion +
      tokens.cachedInputTokens * read +
      tokens.cacheCreationInputTokens * write +
      tokens.outputTokens * price.outputPerMillion) /
      1e6,
  );
}

/** Costs are kept to a millionth of the currency unit: sums of floats otherwise show noise. */
export const roundCost = (n: number) => Math.round(n * 1e6) / 1e6;

/** What `model`'s tokens cost with the table; a model without a price (or none named) is `unpriced` when it used tokens. */
export function modelCost(
  model: string | null,
  tokens: Pick<UsageFigures, "inputTokens" | "outputTokens" | "cachedInputTokens" | "cacheCreationInputTokens">,
  pricing: PricingSettings,
): { cost: number; unpriced: string[] } {
  const price = model === null ? undefined : pricing.models[model];
  return {
    cost: price ? costOf(tokens, price) : 0,
    unpriced: price || tokens.inputTokens + tokens.outputTokens === 0 ? [] : [model ?? UNKNOWN_MODEL],
  };
}

function priced(row: UsageRow, pricing: PricingSettings): ModelUsage {
  const tokens = {
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    cachedInputTokens: Number(row.cached_input_tokens ?? 0),
    cacheCreationInputTokens: Number(row.cache_creation_input_tokens ?? 0),
  };
  return {
    model: row.model ?? UNKNOWN_MODEL,
    calls: Number(row.calls),
    ...tokens,
    ...modelCost(row.model, tokens, pricing),
  };
}

function add(a: UsageFigures, b: UsageFigures): UsageFigures {
  return {
    calls: a.calls + b.calls,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    cost: roundCost(a.cost + b.cost),
    unpriced: [...new Set([...a.unpriced, ...b.unpriced])].sort(),
  };
}

/** Rows grouped by `key`, each group's models priced and added up. */
function grouped<R extends UsageRow, K>(rows: R[], key: (row: R) => K, pricing: PricingSettings): Map<K, UsageFigures> {
  const groups = new Map<K, UsageFigures>();
  for (const row of rows) groups.set(key(row), add(groups.get(key(row)) ?? NO_USAGE, priced(row, pricing)));
  return groups;
}

/** One session's own calls (a fork's usage is its own: what its parent spent stays the parent's). */
export async function sessionUsage(db: Queryable, sessionId: string, pricing: PricingSettings): Promise<SessionUsage> {
  const exists = await db.query("SELECT 1 FROM sessions WHERE id = $1", [sessionId]);
  if (!exists.rowCount) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  const { rows } = await db.query<UsageRow & { stage: string | null; first_at: Date }>(
    `SELECT stage, model, ${SUMS}, min(recorded_at) AS first_at
     FROM agent_usage WHERE session_id = $1 GROUP BY stage, model ORDER BY first_at, model NULLS LAST`,
    [sessionId],
  );
  const byModel = [...grouped(rows, (r) => r.model ?? UNKNOWN_MODEL, pricing)]
    .map(([model, f]) => ({ model, ...f }))
    .sort((a, b) => (a.model === UNKNOWN_MODEL ? 1 : b.model === UNKNOWN_MODEL ? -1 : a.model.localeCompare(b.model)));
  const byStage = [
    ...grouped(
      rows.filter((r) => r.stage !== null),
      (r) => r.stage!,
      pricing,
    ),
  ].map(([stage, f]) => ({ stage, ...f }));
  return { currency: pricing.currency, total: byModel.reduce(add, NO_USAGE), byModel, byStage };
}

export const ZUsageReportQuery = z.object({
  /** Days back from today (UTC), today included. */
  days: z.number().int().min(1).max(366).default(30),
  projectId: z.string().min(1).max(100).optional(),
});
export type UsageReportQuery = z.output<typeof ZUsageReportQuery> & { now?: Date };

/** Totals per project and per day over the last `days` days, optionally for one project. */
export async function usageReport(db: Queryable, query: UsageReportQuery, pricing: PricingSettings): Promise<UsageReport> {
  const today = new Date((query.now ?? new Date()).toISOString().slice(0, 10));
  const since = new Date(today.getTime() - (query.days - 1) * 86_400_000).toISOString().slice(0, 10);
  const { rows } = await db.query<UsageRow & { project_id: string | null; project_name: string | null; day: string }>(
    `SELECT u.project_id, p.name AS project_name, to_char(u.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, u.model, ${SUMS}
     FROM agent_usage u LEFT JOIN projects p ON p.id = u.project_id
     WHERE u.recorded_at >= $1::date AT TIME ZONE 'UTC' AND ($2::text IS NULL OR u.project_id = $2)
     GROUP BY 1, 2, 3, 4`,
    [since, query.projectId ?? null],
  );
  const names = new Map(rows.map((r) => [r.project_id, r.project_name]));
  const byProject = [...grouped(rows, (r) => r.project_id, pricing)]
    .map(([projectId, f]) => ({ projectId, projectName: names.get(projectId) ?? null, ...f }))
    .sort((a, b) => b.cost - a.cost || b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens));
  const byDay = [...grouped(rows, (r) => r.day, pricing)].map(([day, f]) => ({ day, ...f })).sort((a, b) => b.day.localeCompare(a.day));
  return { currency: pricing.currency, since, total: byProject.reduce(add, NO_USAGE), byProject, byDay };
}

/** Every call's tokens and cost so far, by project and model: the metrics' usage gauges, read at scrape time (docs/operations.md, "Metrics"). */
export async function usageTotals(
  db: Queryable,
  pricing: PricingSettings,
): Promise<
  { project: string; model: string; inputTokens: number; outputTokens: number; cachedInputTokens: number; cost: number; currency: string }[]
> {
  const { rows } = await db.query<UsageRow & { project_id: string | null }>({
    name: "catcafe_usage_totals",
    text: `SELECT project_id, model, ${SUMS} FROM agent_usage GROUP BY 1, 2`,
  });
  return rows.map((r) => {
    const f = priced(r, pricing);
    return {
      project: r.project_id ?? "none",
      model: f.model,
      inputTokens: f.inputTokens,
      outputTokens: f.outputTokens,
      cachedInputTokens: f.cachedInputTokens,
      cost: f.cost,
      currency: pricing.currency,
    };
  });
}
