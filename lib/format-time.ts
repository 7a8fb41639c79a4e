// Compact durations for dense tables ("4s", "12m", "3h", "5d"), computed against a given
// "now" (the database clock on the dashboard) so server and client never disagree.
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

export function formatAgo(at: Date, now: Date): string {
  return `${formatAge(now.getTime() - at.getTime())} ago`;
}

/** "2026-11-21 23:30:37 UTC": unambiguous, for tooltips. */
export function formatTimestamp(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}
