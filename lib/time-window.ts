// A time window's start as people write it — "30d", "12h", "2w", or a date / instant
// (2026-11-01, 2026-11-01T08:00:00Z) — turned into an ISO instant: the agent record's
// `--since` / `--until` (CLI) and its page's period chips read the same way.
const RELATIVE = /^(\d{1,4})([hdw])$/;
/** A day (YYYY-MM-DD, midnight UTC) or an ISO 8601 instant with its zone: what the agent record's procedure accepts. */
export const ABSOLUTE_TIME = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2}))?$/;
const UNIT_MS = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;

/** The instant `spec` names, counted back from `now` when relative; throws a message naming the accepted forms. */
export function instantOf(spec: string, now: Date): string {
  const relative = RELATIVE.exec(spec.trim());
  if (relative) {
    const ms = Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
    return new Date(now.getTime() - ms).toISOString();
  }
  if (ABSOLUTE_TIME.test(spec.trim())) {
    const ms = Date.parse(spec.trim());
    if (Number.isFinite(ms)) return new Date(ms).toISOString();
  }
  throw new Error(`"${spec}" is not a time: write a span back from now (30d, 12h, 2w) or a date (2026-11-01) or an instant with its zone`);
}
