// What a command prints. Results go to stdout: text for people, or with --json one JSON
// document (or, for `watch`, one JSON object per line) that scripts can parse. Progress and
// errors go to stderr, so they never mix into a result.
export class Output {
  constructor(
    readonly json: boolean,
    private readonly quiet: boolean,
  ) {}

  /** The command's result: `value` as JSON, or the human lines. */
  result(value: unknown, human: () => string | string[]): void {
    if (this.json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    else {
      const text = human();
      const lines = Array.isArray(text) ? text : [text];
      if (lines.length) process.stdout.write(`${lines.join("\n")}\n`);
    }
  }

  /** One line of a stream (watch): compact JSON per line, or the human line. */
  stream(value: unknown, human: string): void {
    process.stdout.write(`${this.json ? JSON.stringify(value) : human}\n`);
  }

  /** A progress note on stderr (not with --quiet). */
  progress(text: string): void {
    if (!this.quiet) process.stderr.write(`${text}\n`);
  }

  error(lines: string[], json: unknown): void {
    if (this.json) process.stderr.write(`${JSON.stringify(json)}\n`);
    else process.stderr.write(`${lines.map((l, i) => (i === 0 ? `catcafe: ${l}` : l)).join("\n")}\n`);
  }
}

/** Rows as aligned columns (the last column is not padded). */
export function table(headers: string[], rows: string[][]): string[] {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length)));
  return all.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

/** `2026-05-01T10:00:00.000Z` → `2026-05-01 10:00:00` (UTC), or `-`. */
export function shortTime(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : "-";
}

/** A setting's value as a table cell: a list joined, an object as JSON, "—" for none. */
export function settingText(value: unknown): string {
  if (Array.isArray(value)) return value.join(", ");
  if (value === undefined) return "—";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}
