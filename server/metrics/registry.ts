// The process's Prometheus registry and every `catcafe_*` family (docs/operations.md,
// "Metrics"). What happens is recorded where it happens, by the functions below: a counter
// increment or a histogram observation, no query (the runner after a step's result, the
// event store after an append, the brains and agents on a wait or a retry). What the
// database holds (the queue, usage totals) and what a process holds (its pools, live
// subscribers) is read at scrape time by the collectors the process attaches
// (`attachScrapeSources`). Labels stay low-cardinality: step kinds, outcomes, error classes,
// event categories and types, agent kinds, brains, projects, models; never a session or step id.
import client from "prom-client";
import type pg from "pg";

/** What a process reads at scrape time; each is optional (a runner has no subscribers). */
export interface ScrapeSources {
  /** Steps waiting and running, by kind (from the steps table). */
  queue?: () => Promise<{ kind: string; pending: number; running: number }[]>;
  /** Tokens and cost so far, by project and model (from the usage totals). */
  usage?: () => Promise<
    {
      project: string;
      model: string;
      inputTokens: number;
      outputTokens: number;
      cachedInputTokens: number;
      cost: number;
      currency: string;
    }[]
  >;
  /** Open live-update (SSE) subscriptions of this process. */
  subscribers?: () => number;
  /** The process's pg pools, by name. */
  pools?: Record<string, pg.Pool>;
}

type Counter = client.Counter<string>;
type Gauge = client.Gauge<string>;

/** Pickup: milliseconds to seconds; step wall time: up to the longest agent runs. */
const PICKUP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const STEP_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

function families(registry: client.Registry) {
  const registers = [registry];
  let sources: ScrapeSources = {};
  const gauge = (name: string, help: string, labelNames: string[], collect: (g: Gauge) => Promise<void> | void) =>
    new client.Gauge({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        this.reset();
        await collect(this);
      },
    });
  return {
    setSources(next: ScrapeSources) {
      sources = next;
    },
    stepOutcomes: new client.Counter({
      name: "catcafe_step_outcomes_total",
      help: "Step attempts whose outcome this runner recorded, by kind, outcome (completed, failed, released) and error class",
      labelNames: ["kind", "outcome", "error_class"],
      registers,
    }),
    stepPickup: new client.Histogram({
      name: "catcafe_step_pickup_seconds",
      help: "From a step becoming claimable (scheduled, or its retry due) to a runner claiming it, by kind",
      labelNames: ["kind"],
      buckets: PICKUP_BUCKETS,
      registers,
    }),
    stepDuration: new client.Histogram({
      name: "catcafe_step_duration_seconds",
      help: "Wall time of a step attempt on this runner, from its claim to its recorded outcome, by kind and outcome",
      labelNames: ["kind", "outcome"],
      buckets: STEP_BUCKETS,
      registers,
    }),
    providerRetries: new client.Counter({
      name: "catcafe_provider_retries_total",
      help: "Provider requests an agent CLI retried itself (ProviderRetried), by agent CLI kind",
      labelNames: ["agent_kind"],
      registers,
    }),
    rateLimitWaits: new client.Counter({
      name: "catcafe_rate_limit_waits_total",
      help: "Calls held back by a brain's shared rate limit (RateLimitWaited), by brain",
      labelNames: ["brain"],
      registers,
    }),
    rateLimitWaitSeconds: new client.Counter({
      name: "catcafe_rate_limit_wait_seconds_total",
      help: "Time calls waited for a brain's shared rate limit, by brain",
      labelNames: ["brain"],
      registers,
    }),
    eventsAppended: new client.Counter({
      name: "catcafe_events_appended_total",
      help: "Events this process appended, by category (the catalog they belong to) and type",
      labelNames: ["category", "type"],
      registers,
    }),
    sandbox: new client.Gauge({
      name: "catcafe_runner_sandbox_on",
      help: "1 when this runner runs agents and test commands in the sandbox, 0 when not",
      registers,
    }),
    stepsPending: gauge("catcafe_steps_pending", "Steps waiting for a runner (all runners), by kind", ["kind"], async (g) => {
      for (const r of (await sources.queue?.()) ?? []) g.set({ kind: r.kind }, r.pending);
    }),
    stepsRunning: gauge("catcafe_steps_running", "Steps in flight (all runners), by kind", ["kind"], async (g) => {
      for (const r of (await sources.queue?.()) ?? []) g.set({ kind: r.kind }, r.running);
    }),
    tokens: gauge(
      "catcafe_usage_tokens",
      "Tokens reported by agent calls so far (usage totals), by project, model and direction",
      ["project", "model", "direction"],
      async (g) => {
        for (const r of (await sources.usage?.()) ?? []) {
          g.set({ project: r.project, model: r.model, direction: "input" }, r.inputTokens);
          g.set({ project: r.project, model: r.model, direction: "output" }, r.outputTokens);
          // Of the input, read from the provider's prompt cache (docs/scaling.md, "Prompt economics").
          g.set({ project: r.project, model: r.model, direction: "cached_input" }, r.cachedInputTokens);
        }
      },
    ),
    cost: gauge(
      "catcafe_usage_cost",
      "What agent calls cost so far, priced with the settings' price table, by project, model and currency",
      ["project", "model", "currency"],
      async (g) => {
        for (const r of (await sources.usage?.()) ?? []) g.set({ project: r.project, model: r.model, currency: r.currency }, r.cost);
      },
    ),
    subscribers: gauge("catcafe_live_subscribers", "Open live-update (SSE) subscriptions of this web process", [], (g) => {
      if (sources.subscribers) g.set(sources.subscribers());
    }),
    poolTotal: gauge("catcafe_pg_pool_clients", "Connections of the process's pg pool", ["pool"], (g) => {
      for (const [pool, p] of Object.entries(sources.pools ?? {})) g.set({ pool }, p.totalCount);
    }),
    poolIdle: gauge("catcafe_pg_pool_idle_clients", "Idle connections of the process's pg pool", ["pool"], (g) => {
      for (const [pool, p] of Object.entries(sources.pools ?? {})) g.set({ pool }, p.idleCount);
    }),
    poolWaiting: gauge("catcafe_pg_pool_waiting_clients", "Queries waiting for a connection of the process's pg pool", ["pool"], (g) => {
      for (const [pool, p] of Object.entries(sources.pools ?? {})) g.set({ pool }, p.waitingCount);
    }),
  };
}

interface ProcessMetrics {
  registry: client.Registry;
  families: ReturnType<typeof families>;
  /** False: every record function does nothing (the benchmark's comparison, `bench/run.ts --no-metrics`). */
  recording: boolean;
  /** Labelled children by key: a lookup in a Map instead of prom-client hashing the labels on every increment. */
  children: Map<string, { inc(n?: number): void }>;
}

// One per process, on globalThis: Next.js may load this module once per route bundle, and
// every route's appends must count in the one registry /metrics serves.
const shared = globalThis as typeof globalThis & { __catcafeMetrics?: ProcessMetrics };

function processMetrics(): ProcessMetrics {
  if (shared.__catcafeMetrics) return shared.__catcafeMetrics;
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  shared.__catcafeMetrics = { registry, families: families(registry), recording: true, children: new Map() };
  return shared.__catcafeMetrics;
}

/** Turns recording on or off for this process (off: the benchmark's no-op comparison). */
export function setMetricsRecording(on: boolean): void {
  processMetrics().recording = on;
}

/** What this process reads at scrape time (its queue view, usage totals, pools, subscribers). */
export function attachScrapeSources(sources: ScrapeSources): void {
  processMetrics().families.setSources(sources);
}

/** The scrape: every family in Prometheus' text format, and its content type. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  const { registry } = processMetrics();
  return { contentType: registry.contentType, body: await registry.metrics() };
}

function counterChild(key: string, counter: Counter, labels: Record<string, string>): { inc(n?: number): void } {
  const m = processMetrics();
  let child = m.children.get(key);
  if (!child) m.children.set(key, (child = counter.labels(labels)));
  return child;
}

/** A step attempt's outcome was recorded by this runner (req R2: the runner after a step's result). */
export function countStepOutcome(
  kind: string,
  outcome: "completed" | "failed" | "released",
  errorClass: string | null,
  seconds: number,
): void {
  const m = processMetrics();
  if (!m.recording) return;
  const f = m.families;
  counterChild(`o\0${kind}\0${outcome}\0${errorClass ?? ""}`, f.stepOutcomes, { kind, outcome, error_class: errorClass ?? "" }).inc();
  f.stepDuration.observe({ kind, outcome }, seconds);
}

/** A step was claimed `seconds` after it became claimable. */
export function recordStepPickup(kind: string, seconds: number): void {
  const m = processMetrics();
  if (m.recording) m.families.stepPickup.observe({ kind }, seconds);
}

/** An agent CLI retried its provider request (ProviderRetried). */
export function recordProviderRetry(agentKind: string): void {
  const m = processMetrics();
  if (m.recording) counterChild(`p\0${agentKind}`, m.families.providerRetries, { agent_kind: agentKind }).inc();
}

/** A call waited `seconds` for a brain's shared rate limit (RateLimitWaited). */
export function recordRateLimitWait(brain: string, seconds: number): void {
  const m = processMetrics();
  if (!m.recording) return;
  counterChild(`r\0${brain}`, m.families.rateLimitWaits, { brain }).inc();
  counterChild(`w\0${brain}`, m.families.rateLimitWaitSeconds, { brain }).inc(seconds);
}

/** Events were appended (the event store, after the append's statement). */
export function recordEventsAppended(events: readonly { category: string; type: string }[]): void {
  const m = processMetrics();
  if (!m.recording) return;
  for (const e of events)
    counterChild(`e\0${e.category}\0${e.type}`, m.families.eventsAppended, { category: e.category, type: e.type }).inc();
}

/** Whether this runner runs agents sandboxed (docs/operations.md, "The sandbox"). */
export function recordSandbox(on: boolean): void {
  processMetrics().families.sandbox.set(on ? 1 : 0);
}
