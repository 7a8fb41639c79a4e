// The pure parts of `npm run bench -- --scale` (docs/scaling.md, "Many sessions at once"):
// its options, the coders' seeded sleeps, one step's figures from its samples, the knee and
// what limits it, the report's shape and its summary. No I/O here: bench/scale/run.ts
// gathers the samples and test/unit/bench-scale.unit.test.ts checks these functions.
import { percentiles, round, type LatencySummary } from "../lib/percentiles";

export interface ScaleOptions {
  /** Concurrent sessions per step, ascending. */
  sessions: number[];
  /** No new step starts once the run would pass this budget. */
  maxMinutes: number;
  runners: number;
  /** CATCAFE_RUNNER_CONCURRENCY of each runner process. */
  concurrency: number;
  viewers: number;
  /** The coder sleeps a seeded random time in [sleepMin, sleepMax] seconds. */
  sleepMin: number;
  sleepMax: number;
  seed: number;
}

export const DEFAULT_SCALE_OPTIONS: ScaleOptions = {
  sessions: [200, 400, 800, 1600],
  maxMinutes: 8,
  runners: 4,
  concurrency: 50,
  viewers: 50,
  sleepMin: 1,
  sleepMax: 5,
  seed: 46,
};

/** The raw `--flag value` strings of the command line (node:util parseArgs values). */
export interface ScaleFlags {
  sessions?: string;
  "max-minutes"?: string;
  runners?: string;
  concurrency?: string;
  viewers?: string;
  sleep?: string;
  seed?: string;
}

function positiveInt(flag: string, text: string, max: number): number {
  if (!/^\d+$/.test(text.trim())) throw new Error(`--${flag}: "${text}" is not a whole number`);
  const n = Number(text);
  if (n < 1 || n > max) throw new Error(`--${flag}: ${n} is out of range (1..${max})`);
  return n;
}

function positiveNumber(flag: string, text: string, max: number): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || n <= 0 || n > max)
    throw new Error(`--${flag}: "${text}" is not a number in (0, ${max}]`);
  return n;
}

/** The options from the command line's flags, with a clear error for each bad one. */
export function parseScaleFlags(flags: ScaleFlags): ScaleOptions {
  const o: ScaleOptions = { ...DEFAULT_SCALE_OPTIONS };
  if (flags.sessions !== undefined) {
    const steps = flags.sessions.split(",").map((s) => positiveInt("sessions", s, 100_000));
    if (steps.some((n, i) => i > 0 && n <= steps[i - 1]!)) throw new Error(`--sessions: steps must grow (${flags.sessions})`);
    o.sessions = steps;
  }
  if (flags["max-minutes"] !== undefined) o.maxMinutes = positiveNumber("max-minutes", flags["max-minutes"], 24 * 60);
  if (flags.runners !== undefined) o.runners = positiveInt("runners", flags.runners, 64);
  if (flags.concurrency !== undefined) o.concurrency = positiveInt("concurrency", flags.concurrency, 1_000);
  if (flags.viewers !== undefined) o.viewers = positiveInt("viewers", flags.viewers, 10_000);
  if (flags.seed !== undefined) o.seed = positiveInt("seed", flags.seed, 2 ** 31);
  if (flags.sleep !== undefined) {
    const m = /^([\d.]+)-([\d.]+)$/.exec(flags.sleep.trim());
    if (!m) throw new Error(`--sleep: "${flags.sleep}" is not MIN-MAX in seconds (e.g. 1-5)`);
    o.sleepMin = positiveNumber("sleep", m[1]!, 600);
    o.sleepMax = positiveNumber("sleep", m[2]!, 600);
    if (o.sleepMax < o.sleepMin) throw new Error(`--sleep: ${flags.sleep}: the maximum is below the minimum`);
  }
  return o;
}

/** mulberry32: a small seeded generator of numbers in [0, 1), the same sequence for the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The `count` coders' sleeps in seconds (one decimal), in [min, max], from `seed`. */
export function coderSleeps(count: number, seed: number, min: number, max: number): number[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => round(min + next() * (max - min), 1));
}

/** Per-sample readings during a step (bench/scale/sampler.ts). */
export interface ResourceSample {
  /** RSS of the runner processes themselves (kB). */
  runnerRssKb: number;
  /** RSS of every process under the runners: the agents' sandboxes and what they run (kB). */
  agentRssKb: number;
  /** Agent process trees under the runners (their direct children). */
  agentTrees: number;
  /** Steps in state running. */
  runningSteps: number;
  /** Rows of pg_stat_activity (client backends of every database). */
  dbConnections: number;
}

/** CPU of each process group over a step, in ms. */
export type CpuMs = Record<string, number>;

export interface StepInput {
  sessions: number;
  slots: number;
  durationMs: number;
  /** How long starting all N sessions took (startTask, 8 callers): they run at once only if this is short. */
  startAllMs: number;
  completedSessions: number;
  approvedSessions: number;
  stepsFinished: number;
  /** scheduled → claimed of every step of the step's sessions (ms). */
  pickupMs: number[];
  /** An entry's recorded_at → its arrival at a viewer (ms). */
  sseLagMs: number[];
  /** One dashboard sessions.list request, end to end (ms). */
  dashboardListMs: number[];
  /** The web process's reads of the inbox count over the step, and the header streams open meanwhile. */
  inboxCountReads: number;
  inboxCountStreams: number;
  errors: Record<string, number>;
  samples: ResourceSample[];
  /** Before the sessions started: the idle runners' RSS (kB). */
  idleRunnerRssKb: number;
  cpuMs: CpuMs;
  /** The machine's cores and busy share over the step (0..1 of all cores). */
  cores: number;
  machineBusy: number;
  maxConnections: number;
}

export interface StepFigures {
  sessions: number;
  duration_s: number;
  started_in_s: number;
  completed: number;
  approved: number;
  pickup_ms: LatencySummary | null;
  sse_lag_ms: LatencySummary | null;
  dashboard_list_ms: LatencySummary | null;
  /** Every open page's header follows the inbox count: what reading it costs the web process. */
  inbox_count: { streams: number; reads_per_s: number };
  errors: Record<string, number>;
  throughput: { sessions_per_min: number; steps_per_s: number };
  runner_rss: {
    idle_mb: number;
    peak_total_mb: number;
    peak_agents_in_flight: number;
    /** (runners' RSS + their agents' RSS) at the peak sample, less the idle runners', per agent in flight. */
    per_agent_mb: number | null;
    /** The agents' own process trees only, per agent, at the peak sample. */
    per_agent_tree_mb: number | null;
  };
  db_connections: { max: number; mean: number; max_connections: number };
  running_steps_max: number;
  slots: number;
  /** % of one core, per process group, over the step. */
  cpu_pct: Record<string, number>;
  /** Of all the machine's cores (`cores` of them), over the step. */
  machine_busy_pct: number;
  cores: number;
}

const mb = (kb: number) => round(kb / 1024, 1);
const summary = (samples: number[]) => (samples.length ? percentiles(samples) : null);

export function stepFigures(s: StepInput): StepFigures {
  const peak = s.samples.reduce<ResourceSample | null>((best, x) => (!best || x.agentTrees > best.agentTrees ? x : best), null);
  const inFlight = peak?.agentTrees ?? 0;
  const conns = s.samples.map((x) => x.dbConnections);
  const seconds = s.durationMs / 1000;
  return {
    sessions: s.sessions,
    duration_s: round(seconds, 1),
    started_in_s: round(s.startAllMs / 1000, 1),
    completed: s.completedSessions,
    approved: s.approvedSessions,
    pickup_ms: summary(s.pickupMs),
    sse_lag_ms: summary(s.sseLagMs),
    dashboard_list_ms: summary(s.dashboardListMs),
    inbox_count: { streams: s.inboxCountStreams, reads_per_s: seconds > 0 ? round(s.inboxCountReads / seconds, 1) : 0 },
    errors: s.errors,
    throughput: {
      sessions_per_min: seconds > 0 ? round((s.completedSessions * 60) / seconds, 1) : 0,
      steps_per_s: seconds > 0 ? round(s.stepsFinished / seconds, 2) : 0,
    },
    runner_rss: {
      idle_mb: mb(s.idleRunnerRssKb),
      peak_total_mb: peak ? mb(peak.runnerRssKb + peak.agentRssKb) : 0,
      peak_agents_in_flight: inFlight,
      per_agent_mb: peak && inFlight > 0 ? mb((peak.runnerRssKb + peak.agentRssKb - s.idleRunnerRssKb) / inFlight) : null,
      per_agent_tree_mb: peak && inFlight > 0 ? mb(peak.agentRssKb / inFlight) : null,
    },
    db_connections: {
      max: conns.length ? Math.max(...conns) : 0,
      mean: conns.length ? round(conns.reduce((a, b) => a + b, 0) / conns.length, 1) : 0,
      max_connections: s.maxConnections,
    },
    running_steps_max: s.samples.length ? Math.max(...s.samples.map((x) => x.runningSteps)) : 0,
    slots: s.slots,
    cpu_pct: Object.fromEntries(Object.entries(s.cpuMs).map(([k, v]) => [k, s.durationMs > 0 ? round((v * 100) / s.durationMs, 0) : 0])),
    machine_busy_pct: round(s.machineBusy * 100, 0),
    cores: s.cores,
  };
}

export interface KneeRule {
  /** A figure past this multiple of the smallest N's ... */
  ratio: number;
  /** ... and at least this much above it (ms), so that noise on tiny figures is no knee ... */
  minGrowthMs: number;
  /** ... or past this absolute value (ms). */
  absoluteMs: number;
}

export const KNEE_RULE: KneeRule = { ratio: 2, minGrowthMs: 50, absoluteMs: 1_000 };

export interface Knee {
  /** The first N past the rule; null: no step passed it. */
  sessions: number | null;
  /** Which figures passed, and by how much. */
  reasons: string[];
  /** What limits the system at that N (or at the largest N run, when there is no knee). */
  limits: string[];
}

function passes(name: string, value: number | undefined, base: number | undefined, rule: KneeRule): string | null {
  if (value === undefined) return null;
  if (value > rule.absoluteMs) return `${name} ${value} ms > ${rule.absoluteMs} ms`;
  if (base !== undefined && value > base * rule.ratio && value - base >= rule.minGrowthMs)
    return `${name} ${value} ms > ${rule.ratio}x the smallest N's ${base} ms`;
  return null;
}

/**
 * What holds a step back, from its own readings: the runners' slots all taken, the database's
 * connections nearly all used, the machine's CPU busy (and which process group used most).
 */
export function limitsOf(step: StepFigures): string[] {
  const limits: string[] = [];
  if (step.running_steps_max >= step.slots)
    limits.push(`runner concurrency slots: ${step.running_steps_max} steps running of ${step.slots} slots`);
  if (step.db_connections.max >= 0.9 * step.db_connections.max_connections)
    limits.push(`database connections: ${step.db_connections.max} of max_connections ${step.db_connections.max_connections}`);
  if (step.machine_busy_pct >= 85) {
    const top = Object.entries(step.cpu_pct)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([k, v]) => `${k} ${v}%`);
    const ours = Object.values(step.cpu_pct).reduce((a, b) => a + b, 0);
    const used = step.machine_busy_pct * step.cores;
    limits.push(
      `CPU: the machine's ${step.cores} cores ${step.machine_busy_pct}% busy; most used by ${top.join(", ")} (% of one core); ` +
        `the run's processes ${ours}% of the ${used}% used${ours < used / 2 ? ": mostly other processes" : ""}`,
    );
  }
  const errors = Object.values(step.errors).reduce((a, b) => a + b, 0);
  if (errors > 0)
    limits.push(
      `errors: ${Object.entries(step.errors)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
  return limits.length ? limits : ["none seen: slots, connections and CPU all had room"];
}

/** The first N whose pickup p99 or SSE lag p95 passes the rule, against the smallest N's. */
export function findKnee(steps: StepFigures[], rule: KneeRule = KNEE_RULE): Knee {
  if (steps.length === 0) return { sessions: null, reasons: [], limits: [] };
  const base = steps[0]!;
  for (const step of steps) {
    const reasons = [
      passes("pickup p99", step.pickup_ms?.p99, base.pickup_ms?.p99, rule),
      passes("SSE lag p95", step.sse_lag_ms?.p95, base.sse_lag_ms?.p95, rule),
    ].filter((r): r is string => r !== null);
    if (reasons.length) return { sessions: step.sessions, reasons, limits: limitsOf(step) };
  }
  return { sessions: null, reasons: [], limits: limitsOf(steps.at(-1)!) };
}

export interface ScaleReport {
  kind: "scale";
  options: ScaleOptions;
  knee_rule: KneeRule;
  steps: StepFigures[];
  knee: Knee;
  /** Steps not run, and why (the time budget). */
  skipped: Array<{ sessions: number; reason: string }>;
  meta: Record<string, unknown>;
}

export function scaleReport(
  options: ScaleOptions,
  steps: StepFigures[],
  skipped: ScaleReport["skipped"],
  meta: Record<string, unknown>,
): ScaleReport {
  return { kind: "scale", options, knee_rule: KNEE_RULE, steps, knee: findKnee(steps), skipped, meta };
}

/** The report file's name: scale-<UTC date and time>.json. */
export function reportFileName(at: Date): string {
  return `scale-${at.toISOString().slice(0, 16).replace(/[:T]/g, "-")}.json`;
}

/** One line per step, then the knee. */
export function scaleSummaryLines(report: ScaleReport): string[] {
  const ms = (s: LatencySummary | null, key: "p95" | "p99") => (s ? `${s[key]}` : "-");
  const lines = report.steps.map((s) => {
    const errors = Object.values(s.errors).reduce((a, b) => a + b, 0);
    return (
      `N=${s.sessions}: pickup p99 ${ms(s.pickup_ms, "p99")} ms, SSE lag p95 ${ms(s.sse_lag_ms, "p95")} ms, ` +
      `dashboard list p95 ${ms(s.dashboard_list_ms, "p95")} ms, inbox count reads ${s.inbox_count.reads_per_s}/s for ${s.inbox_count.streams} pages, errors ${errors}, ` +
      `RSS/agent ${s.runner_rss.per_agent_mb ?? "-"} MB (${s.runner_rss.peak_agents_in_flight} in flight), ` +
      `DB connections max ${s.db_connections.max}, ${s.throughput.sessions_per_min} sessions/min, ${s.throughput.steps_per_s} steps/s, ` +
      `${s.completed}/${s.sessions} finished in ${s.duration_s} s (all started in ${s.started_in_s} s), machine ${s.machine_busy_pct}% busy`
    );
  });
  for (const s of report.skipped) lines.push(`N=${s.sessions}: not run (${s.reason})`);
  const k = report.knee;
  lines.push(
    k.sessions === null
      ? `knee: none up to N=${report.steps.at(-1)?.sessions ?? 0}; limits there: ${k.limits.join("; ")}`
      : `knee: N=${k.sessions} (${k.reasons.join("; ")}); limits: ${k.limits.join("; ")}`,
  );
  return lines;
}
