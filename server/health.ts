// Liveness of the web process and what it depends on: the database answers, how many
// runners are live (the rule is server/runner/liveness.ts's) and whether each runs agents
// sandboxed. Serves /api/health (200 when ok, 503 when the database is down).
//
// Raw pg rather than Prisma: a health check should depend on as little as possible (a plain
// pool, no generated client), so it also works from scripts and tests that have only a pool.
import type { Queryable } from "./db/pool";
import { listRunners, type RunnerSandbox } from "./runner/liveness";
import { APP_VERSION } from "./version";

/** A live runner as health shows it: its id and whether its agents run sandboxed (null: not reported). */
export interface HealthRunner {
  id: string;
  sandbox: RunnerSandbox | null;
}

export type Health =
  | { ok: true; db: "ok"; runners: number; liveRunners: HealthRunner[]; version: string }
  | { ok: false; db: "down"; runners: 0; liveRunners: []; version: string; error: string };

/** A dead database must answer within this, not after TCP or pool timeouts. */
export const HEALTH_TIMEOUT_MS = 2_000;

export async function getHealth(db: Queryable, options: { timeoutMs?: number } = {}): Promise<Health> {
  const timeoutMs = options.timeoutMs ?? HEALTH_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`database did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const query = listRunners(db, { liveOnly: true });
  // The query may still reject after the timeout won the race: that rejection is expected.
  query.catch(() => {});
  try {
    const { runners } = await Promise.race([query, timeout]);
    const liveRunners = runners.map((r) => ({ id: r.id, sandbox: r.sandbox }));
    return { ok: true, db: "ok", runners: liveRunners.length, liveRunners, version: APP_VERSION };
  } catch (err) {
    return { ok: false, db: "down", runners: 0, liveRunners: [], version: APP_VERSION, error: describeDbError(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** A short, single-line reason (code + message) for a failed database call. */
export function describeDbError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  let message = (typeof e?.message === "string" && e.message ? e.message : String(err)).replace(/\s+/g, " ").trim();
  // Prisma wraps the driver's reason in a multi-line explanation: keep only the reason.
  message = /Message: `([^`]+)`/.exec(message)?.[1] ?? message;
  const code = typeof e?.code === "string" ? `${e.code}: ` : "";
  const text = message.startsWith(code) ? message : `${code}${message}`;
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
