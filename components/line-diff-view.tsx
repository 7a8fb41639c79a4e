// Two texts' line diff (lib/line-diff.ts), the lines added and removed coloured: an
// artifact's drafts, or the same artifact in two branches of a fork tree.
import { lineDiff } from "@/lib/line-diff";

export function LineDiffView({ before, after, testId = "artifact-diff" }: { before: string; after: string; testId?: string }) {
  const lines = lineDiff(before, after);
  return (
    <pre
      data-testid={testId}
      tabIndex={0}
      role="region"
      aria-label="Changes"
      className="max-h-96 overflow-auto rounded bg-zinc-50 py-2 font-mono text-xs dark:bg-zinc-950"
    >
      {lines.map((l, i) => (
        <span
          key={i}
          className={`block px-3 whitespace-pre-wrap ${l.kind === "added" ? "bg-emerald-100 text-emerald-950 dark:bg-emerald-950/60 dark:text-emerald-100" : l.kind === "removed" ? "bg-rose-100 text-rose-950 dark:bg-rose-950/60 dark:text-rose-100" : ""}`}
        >
          {l.kind === "added" ? "+ " : l.kind === "removed" ? "− " : "  "}
          {l.text}
        </span>
      ))}
    </pre>
  );
}
