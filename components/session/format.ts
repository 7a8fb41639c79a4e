// Small formatting rules shared by the session view's parts. Times are shown in UTC (as on
// the dashboard), so a server-rendered page and the browser never disagree.
import { FORMER_MEMBER } from "@/lib/people";

/** "12:03:04" (UTC). */
export function timeOfDay(iso: string): string {
  return iso.slice(11, 19);
}

/** "0:07", "12:41", "1:02:03": a ticking elapsed time. */
export function formatElapsed(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/** "812 ms", "4.2 s". */
export function formatDurationMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** How an actor label reads: a user's name, "runner r-1", "system". */
export function actorName(label: string, names: Record<string, string>): string {
  if (names[label]) return names[label];
  if (label === "system") return "system";
  const colon = label.indexOf(":");
  if (colon < 0) return label;
  const kind = label.slice(0, colon);
  const id = label.slice(colon + 1);
  // The server names every user it knows (server/auth/names.ts); one it does not is no longer on the team.
  if (kind === "user") return FORMER_MEMBER;
  if (kind === "system") return `system (${id})`;
  return `${kind} ${id}`;
}

export function capitalize(s: string): string {
  return s.length ? `${s[0]!.toUpperCase()}${s.slice(1)}` : s;
}
