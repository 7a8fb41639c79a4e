// How usage and cost read, the same in the dashboard and the CLI: token counts grouped by
// thousands, a cost in the table's currency (to the cent, finer below a cent), and a cost
// that leaves out unpriced models saying so. Cached input tokens (read from a provider's prompt
// cache; written to it) are part of the input, shown beside it.
export interface UsageFiguresView {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheCreationInputTokens: number;
  cost: number;
  unpriced: string[];
}

export const formatTokens = (n: number): string => n.toLocaleString("en-US");

export function formatCost(cost: number, currency: string): string {
  const digits = cost !== 0 && Math.abs(cost) < 0.01 ? 4 : 2;
  return `${cost.toFixed(digits)} ${currency}`;
}

/** "900 read, 120 written": the cached part of the input, or "" when there is none. */
export function cachedLine(u: Pick<UsageFiguresView, "cachedInputTokens" | "cacheCreationInputTokens">): string {
  const parts = [
    ...(u.cachedInputTokens ? [`${formatTokens(u.cachedInputTokens)} read`] : []),
    ...(u.cacheCreationInputTokens ? [`${formatTokens(u.cacheCreationInputTokens)} written`] : []),
  ];
  return parts.join(", ");
}

/** "1,200 in (900 cached) / 340 out tokens, 3 calls, 0.0123 USD" (+ what is not priced). */
export function usageLine(u: UsageFiguresView, currency: string): string {
  if (u.calls === 0) return "no usage reported";
  const cost =
    u.unpriced.length === 0 ? formatCost(u.cost, currency) : `${formatCost(u.cost, currency)} + unpriced (${u.unpriced.join(", ")})`;
  const cached = cachedLine(u);
  return `${formatTokens(u.inputTokens)} in${cached ? ` (cache: ${cached})` : ""} / ${formatTokens(u.outputTokens)} out tokens, ${u.calls} call${u.calls === 1 ? "" : "s"}, ${cost}`;
}
