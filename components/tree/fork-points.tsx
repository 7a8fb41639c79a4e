// The forks of a lineage as a table: which session forked from which, at which of the
// parent's events and why, with links to the parent as it was at that point and to the fork.
import { formatAgo } from "@/lib/format-time";
import type { LineageNode } from "@/server/sessions/lineage-tree";
import { StateBadge } from "../state-badge";
import { ForkIcon } from "./fork-icon";

export function ForkPoints({ nodes, now }: { nodes: LineageNode[]; now: Date }) {
  const forks = nodes.filter((n) => n.parentId);
  if (forks.length === 0) return null;
  return (
    <div className="overflow-x-auto">
      <table className="w-full min-w-[36rem] text-left text-xs" data-testid="fork-points">
        <thead>
          <tr className="border-y border-zinc-200 text-xs tracking-wide text-zinc-500 uppercase dark:border-zinc-800 dark:text-zinc-400">
            <th className="px-5 py-2 font-medium">Fork</th>
            <th className="px-3 py-2 font-medium">Reason</th>
            <th className="px-3 py-2 font-medium">Forked from</th>
            <th className="px-3 py-2 font-medium">At event</th>
            <th className="px-3 py-2 font-medium">State</th>
            <th className="px-5 py-2 text-right font-medium">Created</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
          {forks.map((n) => (
            <tr key={n.id}>
              <td className="px-5 py-1.5">
                <a href={`/sessions/${n.id}`} className="font-mono text-zinc-900 hover:underline dark:text-zinc-100">
                  {n.id}
                </a>
              </td>
              <td className="px-3 py-1.5">
                <span className="inline-flex items-center gap-1 font-mono text-violet-700 dark:text-violet-300">
                  <ForkIcon className="size-2.5" />
                  {n.forkReason ?? "fork"}
                </span>
              </td>
              <td className="px-3 py-1.5">
                <a href={`/sessions/${n.parentId}/tree`} className="font-mono text-zinc-600 hover:underline dark:text-zinc-300">
                  {n.parentId}
                </a>
              </td>
              <td className="px-3 py-1.5">
                <a
                  href={`/sessions/${n.parentId}/replay?at=${n.forkVersion}`}
                  className="font-mono text-sky-700 hover:underline dark:text-sky-400"
                  title="Replay the parent at the fork point"
                >
                  #{n.forkVersion}
                </a>
              </td>
              <td className="px-3 py-1.5">
                <StateBadge state={n.state} />
              </td>
              <td className="px-5 py-1.5 text-right text-zinc-500 dark:text-zinc-400 tabular-nums">
                {formatAgo(new Date(n.createdAt), now)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
