// Reading Prometheus' text format in tests: the sum of a family's series whose labels match.
export type Scrape = string;

/** Sum of `name`'s samples whose labels include every pair of `labels` (0 when none). */
export function sample(text: Scrape, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const seen = Object.fromEntries([...(m[3] ?? "").matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => seen[k] === v)) sum += Number(m[4]);
  }
  return sum;
}

/** Whether the scrape declares `name` (its # TYPE line). */
export function hasFamily(text: Scrape, name: string): boolean {
  return new RegExp(`^# TYPE ${name} `, "m").test(text);
}
