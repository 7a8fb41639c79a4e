// A unified diff rendered per file: a header with the path, its status and +/− counts,
// then the hunks with old and new line numbers and coloured additions and deletions.
import { parseUnifiedDiff, type DiffFile, type DiffLine } from "./parse-diff";

const LINE_CLASSES: Record<DiffLine["kind"], string> = {
  add: "bg-emerald-500/10 text-emerald-900 dark:text-emerald-200",
  del: "bg-rose-500/10 text-rose-900 dark:text-rose-200",
  context: "text-zinc-700 dark:text-zinc-300",
  hunk: "bg-sky-500/5 text-sky-700 dark:text-sky-300",
  meta: "text-zinc-500 italic dark:text-zinc-400",
};

const SIGN: Record<DiffLine["kind"], string> = { add: "+", del: "−", context: " ", hunk: "", meta: "" };

export function DiffView({ text }: { text: string }) {
  const files = parseUnifiedDiff(text);
  if (files.length === 0) return <p className="text-xs text-zinc-500 dark:text-zinc-400">The diff is empty.</p>;
  return (
    <div className="space-y-2" data-testid="diff-view">
      {files.map((file, i) => (
        <DiffFileView key={`${file.path}-${i}`} file={file} />
      ))}
    </div>
  );
}

function DiffFileView({ file }: { file: DiffFile }) {
  return (
    <div className="overflow-hidden rounded-md border border-zinc-200 dark:border-zinc-800">
      <div className="flex items-center gap-2 border-b border-zinc-200 bg-zinc-50 px-3 py-1.5 dark:border-zinc-800 dark:bg-zinc-900">
        <span className="truncate font-mono text-xs font-medium text-zinc-800 dark:text-zinc-200" title={file.path}>
          {file.previousPath ? `${file.previousPath} → ` : ""}
          {file.path}
        </span>
        {file.status !== "modified" ? (
          <span className="rounded bg-zinc-200/70 px-1 font-mono text-xs text-zinc-600 dark:bg-zinc-800 dark:text-zinc-400">
            {file.status}
          </span>
        ) : null}
        <span className="ml-auto font-mono text-xs tabular-nums">
          <span className="text-emerald-700 dark:text-emerald-400">+{file.additions}</span>{" "}
          <span className="text-rose-700 dark:text-rose-400">−{file.deletions}</span>
        </span>
      </div>
      <div className="max-h-[520px] overflow-auto bg-white dark:bg-zinc-950" role="region" aria-label="Diff" tabIndex={0}>
        <table className="w-full border-collapse font-mono text-xs leading-5">
          <tbody>
            {file.lines.map((line, i) => (
              <tr key={i} className={LINE_CLASSES[line.kind]}>
                <td className="w-10 border-r border-zinc-100 px-2 text-right text-zinc-500 select-none dark:border-zinc-800 dark:text-zinc-400">
                  {line.oldNo ?? ""}
                </td>
                <td className="w-10 border-r border-zinc-100 px-2 text-right text-zinc-500 select-none dark:border-zinc-800 dark:text-zinc-400">
                  {line.newNo ?? ""}
                </td>
                <td className="w-4 pl-2 select-none">{SIGN[line.kind]}</td>
                <td className="pr-3 whitespace-pre">{line.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
