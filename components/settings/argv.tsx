// An argv pattern of the allowlist as tokens: literals, `*` (one argument) and a trailing
// `**` (any remaining arguments) set apart.
export function ArgvPattern({ argv }: { argv: string[] }) {
  return (
    <span className="inline-flex flex-wrap items-center gap-1 font-mono text-xs">
      {argv.map((token, i) => (
        <span
          key={i}
          className={`rounded px-1.5 py-px ring-1 ring-inset ${
            token === "**"
              ? "bg-violet-500/10 text-violet-700 ring-violet-500/25 dark:text-violet-300"
              : token === "*"
                ? "bg-sky-500/10 text-sky-700 ring-sky-500/25 dark:text-sky-300"
                : "bg-zinc-100 text-zinc-800 ring-zinc-200 dark:bg-zinc-800 dark:text-zinc-200 dark:ring-zinc-700"
          }`}
          title={token === "**" ? "any remaining arguments" : token === "*" ? "exactly one argument" : undefined}
        >
          {token}
        </span>
      ))}
    </span>
  );
}

export function Chips({ items, empty = "—" }: { items: string[]; empty?: string }) {
  if (items.length === 0) return <span className="text-zinc-500 dark:text-zinc-400">{empty}</span>;
  return (
    <span className="inline-flex flex-wrap gap-1">
      {items.map((c) => (
        <span key={c} className="rounded bg-zinc-100 px-1.5 py-px font-mono text-xs text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300">
          {c}
        </span>
      ))}
    </span>
  );
}

export function YesNo({ value, yes = "yes", no = "no" }: { value: boolean; yes?: string; no?: string }) {
  return (
    <span
      className={`inline-flex items-center gap-1 font-mono text-xs ${value ? "text-emerald-700 dark:text-emerald-400" : "text-zinc-500 dark:text-zinc-400"}`}
    >
      <span className={`size-1.5 rounded-full ${value ? "bg-emerald-500" : "bg-zinc-300 dark:bg-zinc-600"}`} aria-hidden />
      {value ? yes : no}
    </span>
  );
}
