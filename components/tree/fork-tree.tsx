// A session lineage drawn as a tree, left to right: the root ancestor, then each fork to
// the right of the session it forked from, joined by connector lines. Every node links to
// its session and says where it forked (the parent's event position, why, and the note of
// who forked it) and how it stands (state, outcome, iteration, events); any other than the
// one in focus can be compared with it.
import { formatAgo, formatTimestamp } from "@/lib/format-time";
import type { LineageNode, LineageTree } from "@/server/sessions/lineage-tree";
import { StateBadge } from "../state-badge";
import { ForkIcon } from "./fork-icon";

const REASON_STYLE: Record<string, string> = {
  rerun: "bg-sky-500/10 text-sky-700 ring-sky-600/25 dark:text-sky-300",
  modify: "bg-amber-500/10 text-amber-800 ring-amber-600/25 dark:text-amber-300",
  revert: "bg-rose-500/10 text-rose-700 ring-rose-600/25 dark:text-rose-300",
  manual: "bg-zinc-500/10 text-zinc-600 ring-zinc-500/25 dark:text-zinc-300",
};

export function ForkTree({ tree, now, starters }: { tree: LineageTree; now: Date; starters: Record<string, string> }) {
  const byId = new Map(tree.nodes.map((n) => [n.id, n]));
  const root = byId.get(tree.rootId);
  if (!root) return null;
  return (
    <div className="overflow-x-auto p-5" data-testid="fork-tree">
      <ul className="inline-flex min-w-full">
        <Branch node={root} byId={byId} focusId={tree.focusId} now={now} starters={starters} />
      </ul>
    </div>
  );
}

function Branch({
  node,
  byId,
  focusId,
  now,
  starters,
}: {
  node: LineageNode;
  byId: Map<string, LineageNode>;
  focusId: string;
  now: Date;
  starters: Record<string, string>;
}) {
  const children = node.children.map((id) => byId.get(id)).filter((c): c is LineageNode => Boolean(c));
  return (
    <li className="relative flex items-center">
      <NodeCard
        node={node}
        focus={node.id === focusId}
        now={now}
        startedBy={starters[node.createdBy] ?? node.createdBy}
        compareWith={node.id === focusId ? null : focusId}
      />
      {children.length ? (
        <>
          {/* from the parent card to its children's spine */}
          <span className="h-px w-6 shrink-0 bg-zinc-300 dark:bg-zinc-700" aria-hidden />
          <ul className="flex flex-col">
            {children.map((child) => (
              <li
                key={child.id}
                className="relative flex items-center py-2 pl-6 before:absolute before:top-1/2 before:left-0 before:h-px before:w-6 before:bg-zinc-300 after:absolute after:top-0 after:bottom-0 after:left-0 after:w-px after:bg-zinc-300 first:after:top-1/2 last:after:bottom-1/2 only:after:hidden dark:before:bg-zinc-700 dark:after:bg-zinc-700"
              >
                <ul className="flex">
                  <Branch node={child} byId={byId} focusId={focusId} now={now} starters={starters} />
                </ul>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </li>
  );
}

function NodeCard({
  node,
  focus,
  now,
  startedBy,
  compareWith,
}: {
  node: LineageNode;
  focus: boolean;
  now: Date;
  startedBy: string;
  /** The session in focus, to compare this one with (absent on the focus itself). */
  compareWith: string | null;
}) {
  const created = new Date(node.createdAt);
  return (
    <article
      data-testid="fork-node"
      data-session-id={node.id}
      data-fork-reason={node.forkReason ?? ""}
      className={`w-72 shrink-0 rounded-lg border bg-white shadow-sm dark:bg-zinc-900 dark:shadow-none ${
        focus ? "border-sky-400 ring-2 ring-sky-500/30 dark:border-sky-500/70" : "border-zinc-200 dark:border-zinc-800"
      }`}
    >
      <header className="flex items-center gap-2 border-b border-zinc-100 px-3 py-1.5 dark:border-zinc-800">
        {node.parentId ? (
          <span
            className={`inline-flex items-center gap-1 rounded px-1.5 py-px font-mono text-xs font-medium ring-1 ring-inset ${REASON_STYLE[node.forkReason ?? "manual"] ?? REASON_STYLE.manual}`}
          >
            <ForkIcon className="size-2.5" /> {node.forkReason ?? "fork"}
          </span>
        ) : (
          <span className="rounded bg-zinc-900 px-1.5 py-px font-mono text-xs font-medium text-white dark:bg-zinc-100 dark:text-zinc-900">
            root
          </span>
        )}
        {node.parentId ? (
          <a
            href={`/sessions/${node.parentId}/replay?at=${node.forkVersion}`}
            className="font-mono text-xs text-zinc-500 hover:text-sky-600 dark:text-zinc-400"
            title="The parent as it was when this fork was made"
          >
            at event {node.forkVersion}
          </a>
        ) : null}
        {focus ? <span className="ml-auto text-xs font-medium text-sky-700 dark:text-sky-400">this session</span> : null}
      </header>
      <div className="space-y-1.5 px-3 py-2">
        <a
          href={`/sessions/${node.id}`}
          className="block truncate text-sm font-medium text-zinc-900 hover:underline dark:text-zinc-100"
          title={node.title}
        >
          {node.title}
        </a>
        <div className="font-mono text-xs text-zinc-500 dark:text-zinc-400">{node.id}</div>
        {node.forkNote ? (
          <p className="line-clamp-2 text-xs text-zinc-600 italic dark:text-zinc-300" data-testid="fork-note" title={node.forkNote}>
            “{node.forkNote}”
          </p>
        ) : null}
        <div className="flex flex-wrap items-center gap-1.5">
          <StateBadge state={node.state} />
          {node.outcome && node.outcome !== node.state ? (
            <span className="font-mono text-xs text-zinc-500 dark:text-zinc-400">→ {node.outcome}</span>
          ) : null}
        </div>
        <div className="flex flex-wrap gap-x-3 gap-y-0.5 text-xs text-zinc-500 dark:text-zinc-400">
          <span className="font-mono">{node.workflow}</span>
          {node.mode ? <span>{node.mode}</span> : null}
          {node.iteration !== null ? <span>iter {node.iteration}</span> : null}
          <span className="tabular-nums">{node.version} events</span>
        </div>
        <div className="flex items-center gap-2 text-xs text-zinc-500 dark:text-zinc-400">
          <span className="truncate" title={`${startedBy}, ${formatTimestamp(created)}`}>
            {startedBy} · {formatAgo(created, now)}
          </span>
          <span className="ml-auto flex shrink-0 gap-2">
            <a href={`/sessions/${node.id}/replay`} className="text-sky-700 hover:underline dark:text-sky-400">
              replay
            </a>
            <a href={`/sessions/${node.id}/tree`} className="text-violet-700 hover:underline dark:text-violet-400">
              focus
            </a>
            {compareWith ? (
              <a
                href={`/sessions/${compareWith}/compare?with=${node.id}`}
                data-testid="compare-link"
                className="text-emerald-700 hover:underline dark:text-emerald-400"
                title={`Compare ${compareWith} with this session`}
              >
                compare
              </a>
            ) : null}
          </span>
        </div>
      </div>
    </article>
  );
}
