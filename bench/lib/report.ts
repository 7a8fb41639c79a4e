// The report's shape, the targets printed beside each figure, and the human summary.
// req N2/R2 name what to measure but no numbers; these targets are this benchmark's
// own reading of them ("picked up within milliseconds", fork "without copying").
export interface BenchReportFigures {
  append_single_per_s: number | null;
  raw_insert_single_per_s: number | null;
  append_vs_raw_single_ratio: number | null;
  append_batch_per_s: number | null;
  raw_insert_batch_per_s: number | null;
  append_vs_raw_batch_ratio: number | null;
  step_pickup_ms: { p50: number; p99: number; n: number; max: number } | null;
  fork_ms: { parent_10: number; parent_100000: number } | null;
  fork_workspace_ms: { p50: number; p99: number; n: number; max: number } | null;
  bake_off_fanout_ms: {
    p50: number;
    p99: number;
    n: number;
    max: number;
    first_steps_done_p50: number;
    first_steps_done_p95: number;
  } | null;
  read_all_lag_ms: { p95: number; p50: number; n: number; max: number; unseen: number } | null;
  notify_listeners: number | null;
  step_overhead_ms: { p50: number; p99: number; n: number; max: number } | null;
  review_loop_cycle_ms: { p50: number; p99: number; n: number; max: number } | null;
  forge_stage_overhead_ms: { p50: number; p99: number; n: number; max: number } | null;
  prompt_cacheable_share: { review_loop: number; forge: number } | null;
  tokens_per_approved_demo_task: Record<
    "review_loop" | "forge",
    { input: number; cached_input: number; output: number; calls: number; first_call_input: number }
  > | null;
  timeline_first_page_ms: { p50: number; p95: number; n: number; last_page_p50: number } | null;
  state_at_position_ms: { at_5000_p50: number; at_10000_p50: number; at_10000_p95: number; replay_at_10000_p50: number } | null;
  state_at_10000_snapshot_ms: {
    warm_p50: number;
    warm_p95: number;
    cold_p50: number;
    cold_p95: number;
    at_9999_p50: number;
    lean_no_snapshot_p50: number;
    n: number;
  } | null;
  state_at_10000_vs_emmett_ms: {
    catcafe: number;
    emmett: number;
    ratio: number;
    catcafe_p95: number;
    emmett_p95: number;
    catcafe_no_snapshot: number;
    rounds: number;
  } | null;
  timeline_first_page_100k_ms: { p50: number; p95: number; n: number; build_ms: number } | null;
  dashboard_list_ms: Record<
    "first_page" | "deep_page" | "state_filter" | "project_filter" | "mine_filter" | "search" | "search_common" | "counts_by_state",
    number
  > | null;
  live_event_to_client_ms: { p95: number; p50: number; n: number; max: number; listen_only_p95: number } | null;
  conversation_turn_ms: {
    p50: number;
    p99: number;
    n: number;
    max: number;
    concurrent_p50: number;
    concurrent_p99: number;
    concurrent_first_turn_p99: number;
  } | null;
  conversation_state_at_10000_ms: {
    warm_p50: number;
    warm_p95: number;
    cold_p50: number;
    at_9999_p50: number;
    lean_no_snapshot_p50: number;
    view_at_10000_p50: number;
    n: number;
  } | null;
  session_page_10k_interactive_ms: {
    p50: number;
    max: number;
    n: number;
    cold_p50: number;
    dom_nodes: number;
    /** The browser's CPU (all processes) per second on the open page while nothing happens, and the animations running then. */
    idle_browser_cpu_ms_per_s: number;
    idle_running_animations: number;
    /** The same page with the renderer's CPU slowed 4× (a modest laptop); `no_code_cache_p50` in an in-memory profile. */
    cpu4x: { p50: number; max: number; n: number; no_code_cache_p50: number; target: number; met: boolean };
    /** Navigation start → the server's first byte (responseStart), 10,000 events and 40 (`small_p50`). */
    first_byte: { p50: number; small_p50: number; target: number; met: boolean };
  } | null;
  append_single_vs_peer: { catcafe: number; emmett: number; ratio: number } | null;
  concurrent_appends: {
    writers: number;
    catcafe: number;
    raw_insert: number;
    raw_insert_notify: number;
    emmett: number;
    ratio: number;
    ratio_vs_emmett: number;
    notifies_per_append: number;
  } | null;
  live_commit_to_paint_ms: {
    p50: number;
    p95: number;
    n: number;
    max: number;
    /** Where the time goes, p50 of each hop: commit → SSE message in the page → entry in the DOM → painted. */
    sse_p50: number;
    dom_p50: number;
    paint_p50: number;
    /** Commit → the first frame with the entry in the viewport (the page follows the newest entries with a smooth scroll). */
    in_view_p50: number;
    in_view_p95: number;
  } | null;
  /** A roundtable's burst on a freshly opened page: each event's transaction start → its entry painted. */
  live_tx_to_paint_burst_ms: {
    p50: number;
    p95: number;
    n: number;
    max: number;
    target_p95: number;
    met: boolean;
    sse_p50: number;
    sse_p95: number;
  } | null;
  first_output_ms: {
    p50: number;
    p95: number;
    n: number;
    max: number;
    target_p95: number;
    met: boolean;
    /** click → confirm committed → claimed → process started → first output recorded → painted. */
    stages_p50: Record<string, number>;
    stages_p95: Record<string, number>;
  } | null;
  sandbox_overhead_ms:
    | {
        overhead_p50: number;
        overhead_p95: number;
        sandboxed: { p50: number; p95: number; max: number; n: number };
        plain: { p50: number; p95: number; max: number; n: number };
        bare_spawn_overhead_p50: number;
      }
    /** No bubblewrap here (or no namespaces): why, instead of a difference of zero. */
    | { unavailable: string }
    | null;
  /** What an agent's way out adds to its start: the run's egress proxy and the bridge in its sandbox. */
  egress_overhead_ms:
    | {
        overhead_p50: number;
        overhead_p95: number;
        egress: { p50: number; p95: number; max: number; n: number };
        offline: { p50: number; p95: number; max: number; n: number };
      }
    | { unavailable: string }
    | null;
  metrics_overhead: {
    on_p50_ms: number;
    off_p50_ms: number;
    ratio_p50: number;
    on_p99_ms: number;
    off_p99_ms: number;
    ratio_p99: number;
    n: number;
    record_ns_per_step: number;
  } | null;
  tracing_overhead: {
    on_p50_ms: number;
    off_p50_ms: number;
    ratio_p50: number;
    on_p99_ms: number;
    off_p99_ms: number;
    ratio_p99: number;
    n: number;
  } | null;
  pickup_vs_peer_ms: (PeerPair<{ p50: number; p99: number; n: number }> & { ratio_p50: number; ratio_p99: number }) | null;
  step_throughput_per_s: PerChainMode<PeerFigure> | null;
  step_statements_per_step: PerChainMode<
    PeerFigure & { catcafe_without_begin_commit: number; graphile_worker_without_begin_commit: number }
  > | null;
  step_wal_bytes_per_step: PerChainMode<PeerFigure> | null;
  step_cpu_ms_per_1000: PerChainMode<PeerPair<{ worker: number; postgres: number }> & { ratio: number }> | null;
  bulk_schedule_ms:
    (PeerFigure & { steps: number; catcafe_api: string; catcafe_fanout: number; fanout_ratio: number; fanout_shape: string }) | null;
  runner_scaling: ({ processes: number[] } & PeerPair<{ per_s: number[]; ratio_to_1: number[] }>) | null;
  step_cost_floor: {
    bare_appends: FloorFigure;
    projected_appends: FloorFigure;
    graphile_worker: FloorFigure;
    /** One event per step carrying its start and result together (an option measured, not the product's shape). */
    start_with_result: FloorFigure;
    start_with_result_vs_bare: { wal: number; cpu: number };
    wal_ratio_bare: number;
    wal_ratio_projected: number;
    cpu_ratio_bare: number;
    cpu_ratio_projected: number;
  } | null;
  langgraph_side_by_side: {
    step_overhead_ms: LangGraphFigure;
    throughput_per_s: LangGraphFigure;
    wal_bytes_per_step: LangGraphFigure;
    statements_per_step: LangGraphFigure;
    latest_state_ms: LangGraphFigure;
    fork_at_middle_ms: LangGraphFigure;
  } | null;
}

/** A figure of Cat Cafe's beside LangGraph's in the same run; ratio = catcafe / langgraph, `met` null when informational. */
export interface LangGraphFigure {
  catcafe: number;
  langgraph: number;
  ratio: number;
  target: string;
  met: boolean | null;
}

/** One system's cost per step in step_cost_floor. */
export interface FloorFigure {
  per_s: number;
  statements_per_step: number;
  wal_bytes_per_step: number;
  cpu_ms_per_1000: { client: number; postgres: number };
}

/** A figure of Cat Cafe's beside graphile-worker's, measured in the same run. */
export interface PeerPair<T> {
  catcafe: T;
  graphile_worker: T;
}
export type PeerFigure = PeerPair<number> & { ratio: number };
/** 2,000 steps one per session, and 200 sessions of 10 steps each scheduled one after the other. */
export interface PerChainMode<T> {
  one_per_session: T;
  ten_per_session: T;
}

export const EMPTY_FIGURES: BenchReportFigures = {
  append_single_per_s: null,
  raw_insert_single_per_s: null,
  append_vs_raw_single_ratio: null,
  append_batch_per_s: null,
  raw_insert_batch_per_s: null,
  append_vs_raw_batch_ratio: null,
  step_pickup_ms: null,
  fork_ms: null,
  fork_workspace_ms: null,
  bake_off_fanout_ms: null,
  read_all_lag_ms: null,
  notify_listeners: null,
  step_overhead_ms: null,
  review_loop_cycle_ms: null,
  forge_stage_overhead_ms: null,
  prompt_cacheable_share: null,
  tokens_per_approved_demo_task: null,
  timeline_first_page_ms: null,
  state_at_position_ms: null,
  state_at_10000_snapshot_ms: null,
  state_at_10000_vs_emmett_ms: null,
  timeline_first_page_100k_ms: null,
  dashboard_list_ms: null,
  live_event_to_client_ms: null,
  conversation_turn_ms: null,
  conversation_state_at_10000_ms: null,
  session_page_10k_interactive_ms: null,
  append_single_vs_peer: null,
  concurrent_appends: null,
  live_commit_to_paint_ms: null,
  live_tx_to_paint_burst_ms: null,
  first_output_ms: null,
  sandbox_overhead_ms: null,
  egress_overhead_ms: null,
  metrics_overhead: null,
  tracing_overhead: null,
  pickup_vs_peer_ms: null,
  step_throughput_per_s: null,
  step_statements_per_step: null,
  step_wal_bytes_per_step: null,
  step_cpu_ms_per_1000: null,
  bulk_schedule_ms: null,
  runner_scaling: null,
  step_cost_floor: null,
  langgraph_side_by_side: null,
};

export const TARGETS: Record<keyof BenchReportFigures, string> = {
  append_single_per_s: "informational (fsync-bound); compare with raw_insert_single_per_s",
  raw_insert_single_per_s: "baseline",
  append_vs_raw_single_ratio: ">= 0.5 (an append costs at most 2x a bare INSERT)",
  append_batch_per_s: "informational; compare with raw_insert_batch_per_s",
  raw_insert_batch_per_s: "baseline",
  append_vs_raw_batch_ratio: ">= 0.5",
  step_pickup_ms: "p50 <= 5 ms, p99 <= 50 ms (req R2: within milliseconds, no slow polling)",
  fork_ms: "parent_100000 <= 1.1x parent_10 (O(1), nothing copied)",
  fork_workspace_ms:
    "informational: a finished session forked (sessions.fork) and the fork's git worktree ready at the recorded commit; see meta.notes.fork_workspace",
  bake_off_fanout_ms:
    "informational: a 6-contender bake-off's confirm committed → every contender's first step started (one runner, 8 slots); first_steps_done: → every contender's first step done (its workspace and agent too); see meta.notes.bake_off_fanout",
  read_all_lag_ms: "p95 <= 100 ms, unseen = 0 (never skip an event)",
  notify_listeners: "informational: LISTENing connections while append_single ran",
  step_overhead_ms:
    "p50 <= 20 ms, p99 <= 100 ms (pickup + StepStarted + result, next decision and next step committed; agents and commands excluded: see meta.notes.step_overhead)",
  review_loop_cycle_ms:
    "informational: build → review → test plan → node --test → approved with instant scripted agents (git worktree and node --test dominate)",
  forge_stage_overhead_ms:
    "p50 <= 60 ms per stage (its steps' pickup, start, result with artifacts recorded and next decision; agents, git and node --test excluded: see meta.notes.forge_stage_overhead)",
  prompt_cacheable_share:
    ">= 0.7 for each: from a session's second agent call on, the share of prompt bytes equal to a prefix already sent in the session (demo-like sessions; see meta.notes.prompt_cacheable_share)",
  tokens_per_approved_demo_task:
    "informational: tokens per approved demo task (input, cacheable input, output), counted from the prompts at 4 bytes per token; see meta.notes.tokens_per_approved_demo_task",
  timeline_first_page_ms: "p50 <= 10 ms for a 10,000-event session (100 entries, no payloads read)",
  state_at_position_ms: "p50 <= 250 ms at event 10,000 (read up to the position and fold; nothing re-run)",
  state_at_10000_snapshot_ms:
    "warm_p50 <= 20 ms: store.stateAt with the task fold at event 10,000, from the nearest snapshot (every 1,000) + the lean read of the rest; cold = no snapshot yet (folds all, keeps one); at_9999 = the longest tail (999 events after a snapshot); lean_no_snapshot = all 10,000 through the lean read",
  state_at_10000_vs_emmett_ms:
    "ratio = catcafe / emmett, goal <= 1: p50 of Cat Cafe's state at event 10,000 (snapshots, warm) vs Emmett's aggregateStream of the same 10,000 events with the same evolve, alternating rounds on the same PostgreSQL",
  timeline_first_page_100k_ms: "p50 <= 50 ms: the first timeline page (100 entries) of a 100,000-event session (readTimeline)",
  dashboard_list_ms: "each p50 <= 20 ms with 10,000 sessions (keyset pages, trigram search); the dashboard's own query",
  live_event_to_client_ms: "p95 <= 100 ms (commit → SSE message parsed by a live.updates subscriber over HTTP)",
  conversation_turn_ms:
    "p50 <= 10 ms (a person's message committed → the first agent call started, simulated agent; concurrent_*: 16 conversations posting at once; see meta.notes.conversation_turn)",
  conversation_state_at_10000_ms:
    "warm_p50 <= 20 ms: store.stateAt with the conversation fold at event 10,000 of a conversation, from the nearest snapshot + the lean read of the rest (the state every replay and decision on it reads); cold = no snapshot yet; view_at_10000 = readConversation's replay view (state + every entry)",
  session_page_10k_interactive_ms:
    "p50 <= 1000 ms (a 10,000-event session's page in chromium, navigation start → Actions and a timeline entry painted and hydrated, in a browser profile on disk that keeps scripts' compiled code as a person's browser does); cpu4x.p50 <= 1000 ms (the same with the CPU slowed 4×, Emulation.setCPUThrottlingRate; cpu4x.no_code_cache_p50: in an in-memory profile, the scripts compiled at every opening, informational); idle_browser_cpu_ms_per_s informational (the browser's CPU per second on the open page while nothing happens, every process; idle_running_animations: none expected); first_byte.p50 <= 150 ms (navigation start → the server's first byte, 10,000 events); see meta.notes.session_page",
  append_single_vs_peer:
    "ratio = catcafe / emmett >= 1 (single-event appends/s, one writer, existing streams, exact expected version; Emmett 0.42 appendToStream on the same PostgreSQL, alternating rounds; see meta.notes.append_single_peer)",
  concurrent_appends:
    "ratio = catcafe / raw_insert >= 0.5 (appends/s with 32 writers on own streams vs a bare INSERT of the same row; raw_insert_notify = that INSERT + one pg_notify, the NOTIFY's price; emmett = Emmett's appendToStream, ratio_vs_emmett = catcafe / emmett; notifies_per_append = NOTIFYs received per Cat Cafe append; a LISTEN on the events channel is open throughout; see meta.notes.concurrent_appends)",
  live_commit_to_paint_ms:
    "p95 <= 100 ms (an event committed → its timeline entry painted on the open session page in chromium, timed in the browser; sse/dom/paint_p50: commit → SSE message in the page → entry in the DOM → the frame after it; in_view: commit → the entry first in the viewport; see meta.notes.live_paint)",
  live_tx_to_paint_burst_ms:
    "p95 <= 100 ms (bursts of 5 roundtable events, one transaction each, right after a freshly opened session page went live → each entry painted, timed from its transaction's start (recorded_at); sse: → the SSE message in the page; see meta.notes.live_paint_burst)",
  first_output_ms:
    "p95 <= 150 ms (Confirm clicked on an open session page in chromium → the coder's first line painted; the coder a command agent printing at once in the sandbox; stages: request → committed → claimed → process started → first output recorded → painted; see meta.notes.first_output)",
  sandbox_overhead_ms:
    "overhead_p50 <= 20 ms (runCommand(['true']) as the runner runs a test command, bubblewrap on minus off, alternating sample by sample; bare_spawn: bwrap's own cost; see meta.notes.sandbox_overhead)",
  egress_overhead_ms:
    "overhead_p50 <= 150 ms (CommandAgent.invoke of `true` with network — the run's egress proxy and the bridge started first inside the sandbox — minus the same without network; an agent step takes seconds; see meta.notes.egress_overhead)",
  metrics_overhead:
    "ratio_p50 <= 1.1 (a step's round trip, scheduled → result recorded, on an idle in-process runner with metrics recorded / with every record function a no-op, blocks alternating; record_ns_per_step: the record functions alone; see meta.notes.metrics_overhead)",
  tracing_overhead:
    "ratio_p50 <= 1.1 (the same round trip as metrics_overhead with the OpenTelemetry SDK started — every span exported in batches over OTLP/HTTP to a local sink — / not started, blocks alternating; see meta.notes.tracing_overhead)",
  pickup_vs_peer_ms:
    "informational, no target (docs/scaling.md: a job queue is not the bar for agent steps); ratio = catcafe / graphile_worker (scheduling committed → the step's executor / the task function entered, both consumers idle; see meta.notes.pickup_vs_peer)",
  step_throughput_per_s:
    "informational, no target (docs/scaling.md); ratio = catcafe / graphile_worker (2,000 no-op steps drained by 1 worker process of concurrency 4; ten_per_session: each next step scheduled as the previous completes)",
  step_statements_per_step:
    "informational, no target (docs/scaling.md; pg_stat_statements calls per step in the worker window, BEGIN/COMMIT included; ratio = catcafe / graphile_worker; see meta.notes.runner_peers)",
  step_wal_bytes_per_step:
    "informational, no target (docs/scaling.md; pg_current_wal_lsn diff per step in the worker window, a VACUUM and a CHECKPOINT before each batch is scheduled; ratio = catcafe / graphile_worker)",
  step_cpu_ms_per_1000:
    "informational, no target (docs/scaling.md; ratio = catcafe / graphile_worker of worker + PostgreSQL CPU ms per 1,000 steps, from /proc; one_per_session and ten_per_session as in step_throughput_per_s)",
  bulk_schedule_ms:
    "informational, ratio = catcafe / graphile_worker (2,000 steps scheduled at once, no consumer running; graphile-worker: one addJobs call; catcafe: 2,000 sessions of one step, one append each (catcafe_api), and catcafe_fanout: the same 2,000 steps as a fan-out of 20 sessions x 100, one scheduleSteps append each, fanout_ratio = catcafe_fanout / graphile_worker)",
  runner_scaling:
    "ratio_to_1 >= 0.95 at 2 and 4 processes on 2 cores (no loss from adding runners; steps/s with 1, 2, 4 worker processes of concurrency 4, 2,000 steps one per session)",
  langgraph_side_by_side:
    "ratio = catcafe / langgraph, each figure with its own target and met: fork_at_middle_ms <= 1 (forkSession of a 10,000-event session at event 5,000 vs updateState on the middle checkpoint of a 3,333-checkpoint thread), latest_state_ms <= 1 (state at the head vs getState), wal_bytes_per_step <= 1, throughput_per_s >= 1.5 (three no-op steps vs a three-node no-op graph, concurrency 4); step_overhead_ms and statements_per_step informational; LangGraph.js with its PostgreSQL checkpointer in a database of its own on the same server; see meta.notes.langgraph and docs/scaling.md",
  step_cost_floor:
    "informational: the least a step costs while its start and its result are two events, beside graphile-worker in the same run (2,000 steps, 4 writers, two one-statement appends per step: bare_appends under types nothing projects, projected_appends as the real StepStarted/StepCompleted through the steps projection's trigger; no claim, no runner, no transaction); wal_ratio_* and cpu_ratio_* = that / graphile_worker (CPU = client + PostgreSQL); start_with_result: one event per step carrying its start and result together (Temporal's shape, an option measured, not a change), start_with_result_vs_bare = that / bare_appends. The rest of step_*_per_step is the claim, the runner and the result's transaction; see docs/scaling.md",
};

export interface BenchReport extends BenchReportFigures {
  targets: typeof TARGETS;
  errors: Record<string, string>;
  meta: Record<string, unknown>;
}

/** One line per figure with its target, for a reader at the terminal (stderr). */
export function summaryLines(figures: BenchReportFigures): string[] {
  const keys = Object.keys(TARGETS) as (keyof BenchReportFigures)[];
  const width = Math.max(...keys.map((k) => k.length));
  return keys.map((k) => `${k.padEnd(width)}  ${JSON.stringify(figures[k])}   target: ${TARGETS[k]}`);
}
