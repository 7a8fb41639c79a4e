"use client";
// What the session's agents used (docs/delivery.md, "Usage and cost"): tokens in (of them, read from a provider's
// prompt cache) and out and the cost, in all and per
// model, priced with settings.json's table; a model without a price is named, its cost left
// out. Read again when an agent's output is recorded (`version`: the latest one's).
import { useQuery } from "@tanstack/react-query";
import { memo, useEffect } from "react";
import { Panel } from "@/components/panel";
import { useTRPC } from "@/lib/trpc/client";
import { formatCost, formatTokens } from "@/lib/usage";

/** Drawn again only when its props change: not for each live batch the session view draws. */
export const UsagePanel = memo(function UsagePanel({ sessionId, version }: { sessionId: string; version: number }) {
  const trpc = useTRPC();
  const usage = useQuery(trpc.usage.session.queryOptions({ sessionId }));
  const { refetch } = usage;
  useEffect(() => {
    void refetch();
  }, [version, refetch]);
  const data = usage.data;
  if (!data || data.total.calls === 0) return null;
  const { total, currency } = data;
  return (
    <Panel title="Usage" meta={<span className="tabular-nums">{formatCost(total.cost, currency)}</span>}>
      <div className="space-y-2 px-4 py-3 text-xs" data-testid="usage-panel">
        <table className="w-full text-left tabular-nums">
          <thead className="text-xs tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
            <tr>
              <th className="py-0.5 font-medium">Model</th>
              <th className="py-0.5 text-right font-medium">In</th>
              <th className="py-0.5 text-right font-medium" title="Input tokens read from the provider's prompt cache (part of In)">
                Cached
              </th>
              <th className="py-0.5 text-right font-medium">Out</th>
              <th className="py-0.5 text-right font-medium">Cost</th>
            </tr>
          </thead>
          <tbody className="text-zinc-800 dark:text-zinc-200">
            {data.byModel.map((m) => (
              <tr key={m.model} data-testid="usage-model">
                <td className="max-w-[10rem] truncate py-0.5 font-mono" title={`${m.calls} call${m.calls === 1 ? "" : "s"}`}>
                  {m.model}
                </td>
                <td className="py-0.5 text-right">{formatTokens(m.inputTokens)}</td>
                <td className="py-0.5 text-right" data-testid="usage-model-cached">
                  {formatTokens(m.cachedInputTokens)}
                </td>
                <td className="py-0.5 text-right">{formatTokens(m.outputTokens)}</td>
                <td className="py-0.5 text-right">{m.unpriced.length ? "no price" : formatCost(m.cost, currency)}</td>
              </tr>
            ))}
          </tbody>
          {data.byModel.length > 1 ? (
            <tfoot className="border-t border-zinc-200 font-medium text-zinc-900 dark:border-zinc-700 dark:text-zinc-100">
              <tr data-testid="usage-total">
                <td className="py-0.5">All</td>
                <td className="py-0.5 text-right">{formatTokens(total.inputTokens)}</td>
                <td className="py-0.5 text-right">{formatTokens(total.cachedInputTokens)}</td>
                <td className="py-0.5 text-right">{formatTokens(total.outputTokens)}</td>
                <td className="py-0.5 text-right">{formatCost(total.cost, currency)}</td>
              </tr>
            </tfoot>
          ) : null}
        </table>
        {total.unpriced.length ? (
          <p className="text-zinc-600 dark:text-zinc-400">
            No price for {total.unpriced.join(", ")}: add it to <span className="font-mono">pricing.models</span> in settings.json.
          </p>
        ) : null}
      </div>
    </Panel>
  );
});
