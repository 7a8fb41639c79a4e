// Environment variables, parsed once with zod: a missing or malformed one fails fast
// with its name. Each process parses only the part it needs.
import path from "node:path";
import { z } from "zod";

const int = (def: number) => z.coerce.number().int().positive().default(def);

export const ZRunnerEnv = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL"),
  CATCAFE_RUNNER_ID: z.string().min(1).optional(),
  /**
   * The host this runner records (its row, the worktrees it creates; docs/scaling.md): the
   * machine's hostname by default. Set it when hostnames are not unique (containers).
   */
  CATCAFE_RUNNER_HOST: z.string().trim().min(1).max(255).optional(),
  CATCAFE_RUNNER_LEASE_MS: int(15_000),
  CATCAFE_RUNNER_POLL_MS: int(1_000).pipe(z.number().max(1_000, "the fallback poll must be at most 1000 ms")),
  CATCAFE_RUNNER_CONCURRENCY: int(4),
  CATCAFE_RUNNER_RECLAIM_BACKOFF_MS: int(1_000),
  CATCAFE_RUNNER_SHUTDOWN_GRACE_MS: int(10_000),
  /** `0`: do not probe the agent CLIs at start (tests, hosts without any). */
  CATCAFE_RUNNER_DETECT_SHELLS: z.enum(["0", "1"]).default("1"),
  /**
   * This machine's clones of projects registered elsewhere: a JSON object from the registered
   * repoPath to the local clone, e.g. {"/srv/projects/app":"/home/runner/app"}.
   */
  CATCAFE_REPOSITORY_PATHS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (!text) return {} as Record<string, string>;
      const parsed = z.record(z.string().min(1), z.string().min(1)).safeParse(
        (() => {
          try {
            return JSON.parse(text);
          } catch {
            return null;
          }
        })(),
      );
      if (!parsed.success) {
        ctx.addIssue({ code: "custom", message: 'must be a JSON object of paths, e.g. {"/srv/app":"/home/runner/app"}' });
        return z.NEVER;
      }
      return parsed.data;
    }),
  /**
   * This runner's labels, comma-separated (e.g. `gpu,linux`): a step whose agent asks for
   * labels (runnerLabels) goes only to a runner that has them all.
   */
  CATCAFE_RUNNER_LABELS: z
    .string()
    .optional()
    .transform((text) => [
      ...new Set(
        (text ?? "")
          .split(",")
          .map((l) => l.trim())
          .filter(Boolean),
      ),
    ])
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "labels use letters, digits, '.', '_' and '-', separated by commas"))),
  /** Process ledgers of this host's runners (what a killed runner left running is ended from them). */
  CATCAFE_RUNNER_STATE_DIR: z
    .string()
    .min(1)
    .default(() => path.resolve(process.env.CATCAFE_DATA_DIR ?? ".data", "runners")),
  /** Where session worktrees are created; must be outside every project repository. */
  CATCAFE_WORKSPACES_DIR: z
    .string()
    .min(1)
    .default(() => path.resolve(process.env.CATCAFE_DATA_DIR ?? ".data", "workspaces")),
});
export type RunnerEnv = z.infer<typeof ZRunnerEnv>;

export const ZWebEnv = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL"),
  CATCAFE_WEB_POOL_MAX: int(20),
  CATCAFE_WEB_POOL_WAIT_MS: int(5_000),
});

/**
 * The tracker (docs/delivery.md, "Review comments"): the user the delivery token acts as on
 * GitHub or GitLab; review comments by it are Cat Cafe's own and never followed up.
 */
export const ZTrackerEnv = z.object({
  CATCAFE_TRACKER_BOT_USER: z.string().trim().min(1).max(100).optional(),
});

export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid environment:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/**
 * /metrics (docs/operations.md, "Metrics"): a runner serves it on CATCAFE_METRICS_PORT (none
 * when unset) at CATCAFE_METRICS_HOST; the web server at /api/metrics. With
 * CATCAFE_METRICS_TOKEN set, a scrape must bear it; without, only loopback and private
 * addresses may scrape.
 */
export const ZMetricsEnv = z.object({
  CATCAFE_METRICS_PORT: z.preprocess((v) => (v === "" ? undefined : v), z.coerce.number().int().min(0).max(65_535).optional()),
  CATCAFE_METRICS_HOST: z.string().trim().min(1).default("127.0.0.1"),
  CATCAFE_METRICS_TOKEN: z
    .string()
    .optional()
    .transform((t) => (t ? t : undefined))
    .pipe(z.string().min(16, "must be at least 16 characters").optional()),
});
