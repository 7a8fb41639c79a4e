"use client";
// A session's feedback history (sessions.feedback): every follow-up, gate feedback, guidance,
// change request and review or critic finding, in order, with who gave it. Read again when a
// piece of feedback is recorded (`version`: the latest one's); the latest first, a few unless
// expanded.
import { useQuery } from "@tanstack/react-query";
import { memo, useEffect, useState } from "react";
import { Panel } from "@/components/panel";
import { useTRPC } from "@/lib/trpc/client";

const SHOWN = 6;

const SOURCE_LABEL: Record<string, string> = {
  operator: "follow-up",
  gate: "gate feedback",
  guidance: "guidance",
  change: "change request",
  review: "review",
  critic: "critic",
};

/** Drawn again only when its props change: not for each live batch the session view draws. */
export const FeedbackPanel = memo(function FeedbackPanel({ sessionId, version }: { sessionId: string; version: number }) {
  const trpc = useTRPC();
  const history = useQuery(trpc.sessions.feedback.queryOptions({ sessionId }));
  const { refetch } = history;
  const [all, setAll] = useState(false);
  useEffect(() => {
    void refetch();
  }, [version, refetch]);
  const entries = [...(history.data ?? [])].reverse();
  if (!entries.length) return null;
  const shown = all ? entries : entries.slice(0, SHOWN);
  return (
    <Panel title="Feedback history" meta={<span className="tabular-nums">{entries.length}</span>}>
      <ol className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="feedback-history">
        {shown.map((f) => (
          <li key={`${f.version}-${f.text}`} className="space-y-0.5 px-4 py-2 text-xs" data-testid="feedback-entry" data-source={f.source}>
            <div className="flex flex-wrap items-center gap-x-2 text-xs text-zinc-500 dark:text-zinc-400">
              <span className="font-medium text-zinc-700 dark:text-zinc-200">{SOURCE_LABEL[f.source] ?? f.source}</span>
              {f.severity ? <span className="font-mono">{f.severity}</span> : null}
              <span>
                {f.stage ? `${f.stage}, ` : ""}iteration {f.iteration}
              </span>
              <span className="ml-auto font-mono">#{f.version}</span>
            </div>
            <p className="leading-snug break-words whitespace-pre-wrap text-zinc-800 dark:text-zinc-200">{f.text}</p>
            <p className="text-xs text-zinc-500 dark:text-zinc-400" title={f.name}>
              {f.name}
            </p>
          </li>
        ))}
      </ol>
      {entries.length > SHOWN ? (
        <button
          type="button"
          onClick={() => setAll(!all)}
          className="w-full border-t border-zinc-100 px-4 py-1.5 text-left text-xs text-sky-700 hover:underline dark:border-zinc-800 dark:text-sky-400"
        >
          {all ? "Show the latest only" : `Show all ${entries.length}`}
        </button>
      ) : null}
    </Panel>
  );
});
