"use client";
// The Check button of one brain: connectivity, key, model and rate limit, asked through a
// server action; the answer is shown beside the button.
import { useState, useTransition } from "react";
import type { BrainCheckOutcome } from "@/server/projects/brains";

export function BrainCheck({ check, disabledReason }: { check: () => Promise<BrainCheckOutcome>; disabledReason: string | null }) {
  const [outcome, setOutcome] = useState<BrainCheckOutcome | null>(null);
  const [pending, startTransition] = useTransition();
  if (disabledReason) return <span className="text-xs text-zinc-500 dark:text-zinc-400">{disabledReason}</span>;
  return (
    <div className="space-y-1.5">
      <button
        type="button"
        disabled={pending}
        onClick={() => startTransition(async () => setOutcome(await check()))}
        className="inline-flex h-7 items-center gap-1.5 rounded-md bg-zinc-900 px-2.5 text-xs font-medium text-white shadow-sm hover:bg-zinc-800 disabled:cursor-wait disabled:opacity-60 dark:bg-zinc-100 dark:text-zinc-900 dark:hover:bg-white"
      >
        {pending ? <span className="size-3 animate-spin rounded-full border-2 border-current border-t-transparent" aria-hidden /> : null}
        {pending ? "Checking…" : "Check"}
      </button>
      {outcome ? <Result outcome={outcome} /> : null}
    </div>
  );
}

function Result({ outcome }: { outcome: BrainCheckOutcome }) {
  if (!outcome.ok) return <p className="max-w-72 text-xs text-rose-700 dark:text-rose-400">{outcome.error}</p>;
  const r = outcome.result;
  const item = (label: string, value: string, good: boolean | null) => (
    <li className="flex gap-1.5">
      <span className={good === null ? "text-zinc-500 dark:text-zinc-400" : good ? "text-emerald-700" : "text-rose-700"}>
        {good === null ? "·" : good ? "✓" : "✗"}
      </span>
      <span className="text-zinc-500 dark:text-zinc-400">{label}</span>
      <span className="font-mono">{value}</span>
    </li>
  );
  return (
    <div
      className={`max-w-80 rounded-md border p-2 text-xs ${r.ok ? "border-emerald-200 bg-emerald-50/60 dark:border-emerald-900/60 dark:bg-emerald-950/20" : "border-rose-200 bg-rose-50/60 dark:border-rose-900/60 dark:bg-rose-950/20"}`}
      data-testid="brain-check-result"
    >
      <p className="font-medium">{r.message}</p>
      <ul className="mt-1 space-y-0.5">
        {item("endpoint", r.connectivity, r.connectivity === "ok")}
        {item("key", r.auth, r.auth === "ok" ? true : r.auth === "unknown" ? null : false)}
        {item("model", r.modelExists === null ? "unknown" : r.modelExists ? "exists" : "not found", r.modelExists)}
        {item("latency", r.latencyMs === null ? "—" : `${r.latencyMs} ms`, null)}
        {item(
          "rate limit",
          `1 call / ${r.rateLimit.minIntervalMs} ms${r.rateLimit.providerRequestsPerMinute ? ` (provider ${r.rateLimit.providerRequestsPerMinute}/min)` : ""}`,
          r.rateLimit.warning ? false : null,
        )}
      </ul>
      {r.rateLimit.warning ? <p className="mt-1 text-amber-700 dark:text-amber-400">{r.rateLimit.warning}</p> : null}
    </div>
  );
}
