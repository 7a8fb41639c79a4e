// Parsed agent output as structured data: objects as key/value rows, arrays as numbered
// items, scalars coloured by type. Deeply nested values stay readable without a library.
import type { JsonValue } from "@/server/sessions/view/entries";

export function JsonView({ value }: { value: JsonValue }) {
  return (
    <div className="overflow-x-auto font-mono text-xs leading-5">
      <JsonNode value={value} />
    </div>
  );
}

function JsonNode({ value }: { value: JsonValue }) {
  if (value === null) return <span className="text-zinc-500 dark:text-zinc-400">null</span>;
  if (typeof value === "string")
    return <span className="break-words whitespace-pre-wrap text-emerald-700 dark:text-emerald-300">&quot;{value}&quot;</span>;
  if (typeof value === "number") return <span className="text-sky-700 dark:text-sky-300">{value}</span>;
  if (typeof value === "boolean") return <span className="text-violet-700 dark:text-violet-300">{String(value)}</span>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="text-zinc-500 dark:text-zinc-400">[]</span>;
    return (
      <ol className="space-y-0.5 border-l border-zinc-200 pl-3 dark:border-zinc-700">
        {value.map((item, i) => (
          <li key={i} className="flex gap-2">
            <span className="shrink-0 text-zinc-500 dark:text-zinc-400 select-none">{i}</span>
            <div className="min-w-0 flex-1">
              <JsonNode value={item} />
            </div>
          </li>
        ))}
      </ol>
    );
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return <span className="text-zinc-500 dark:text-zinc-400">{"{}"}</span>;
  return (
    <dl className="space-y-0.5 border-l border-zinc-200 pl-3 dark:border-zinc-700">
      {keys.map((key) => (
        <div key={key} className="flex gap-2">
          <dt className="shrink-0 text-zinc-500 dark:text-zinc-400">{key}:</dt>
          <dd className="min-w-0 flex-1">
            <JsonNode value={value[key]!} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
