// The pure parts of `npm run bench -- --scale` (bench/scale/model.ts, docs/scaling.md "Many
// sessions at once"): percentiles, the seeded sleeps, the flags, one step's figures from its
// samples, the knee and its limits, and the report's shape.
import { describe, expect, it } from "vitest";
import { percentiles } from "../../bench/lib/percentiles";
import {
  coderSleeps,
  DEFAULT_SCALE_OPTIONS,
  findKnee,
  limitsOf,
  parseScaleFlags,
  reportFileName,
  scaleReport,
  scaleSummaryLines,
  stepFigures,
  type StepFigures,
  type StepInput,
} from "../../bench/scale/model";

const input = (over: Partial<StepInput> = {}): StepInput => ({
  sessions: 200,
  slots: 200,
  durationMs: 60_000,
  startAllMs: 4_000,
  completedSessions: 200,
  approvedSessions: 198,
  stepsFinished: 800,
  pickupMs: [10, 20, 30, 40],
  sseLagMs: [5, 15],
  dashboardListMs: [100],
  inboxCountReads: 300,
  inboxCountStreams: 50,
  errors: {},
  samples: [
    { runnerRssKb: 400 * 1024, agentRssKb: 100 * 1024, agentTrees: 10, runningSteps: 12, dbConnections: 30 },
    { runnerRssKb: 420 * 1024, agentRssKb: 200 * 1024, agentTrees: 20, runningSteps: 20, dbConnections: 50 },
    { runnerRssKb: 410 * 1024, agentRssKb: 50 * 1024, agentTrees: 5, runningSteps: 6, dbConnections: 40 },
  ],
  idleRunnerRssKb: 400 * 1024,
  cpuMs: { web: 6_000, runners: 30_000, postgres: 12_000 },
  cores: 2,
  machineBusy: 0.5,
  maxConnections: 268,
  ...over,
});

/** A step's figures with the latencies given (ms), everything else from input(). */
function step(sessions: number, pickupP99: number, sseP95: number, over: Partial<StepInput> = {}): StepFigures {
  return stepFigures(input({ sessions, pickupMs: [pickupP99], sseLagMs: [sseP95], ...over }));
}

describe("percentiles", () => {
  it("interpolates between the closest ranks, as numpy does", () => {
    expect(percentiles([4, 1, 3, 2])).toMatchObject({ n: 4, p50: 2.5, max: 4, mean: 2.5 });
    const hundredOne = Array.from({ length: 101 }, (_, i) => i);
    expect(percentiles(hundredOne)).toMatchObject({ p50: 50, p95: 95, p99: 99 });
    expect(() => percentiles([])).toThrow(/no samples/);
  });
});

describe("coderSleeps", () => {
  it("is the same for the same seed, within [min, max], one decimal, and differs with the seed", () => {
    const a = coderSleeps(500, 46, 1, 5);
    expect(coderSleeps(500, 46, 1, 5)).toEqual(a);
    expect(coderSleeps(500, 47, 1, 5)).not.toEqual(a);
    expect(a.every((s) => s >= 1 && s <= 5 && Math.round(s * 10) === s * 10)).toBe(true);
    const mean = a.reduce((x, y) => x + y, 0) / a.length;
    expect(mean).toBeGreaterThan(2.7);
    expect(mean).toBeLessThan(3.3);
    expect(new Set(a).size).toBeGreaterThan(30);
  });
});

describe("parseScaleFlags", () => {
  it("defaults to steps from 200 up, 4 runners, 50 viewers, sleeps of 1-5 s, an 8-minute budget", () => {
    expect(parseScaleFlags({})).toEqual(DEFAULT_SCALE_OPTIONS);
    expect(DEFAULT_SCALE_OPTIONS).toMatchObject({
      sessions: [200, 400, 800, 1600],
      runners: 4,
      viewers: 50,
      sleepMin: 1,
      sleepMax: 5,
      maxMinutes: 8,
    });
  });

  it("reads the steps, the budget, the sleeps and the sizes", () => {
    expect(
      parseScaleFlags({ sessions: "50,100", "max-minutes": "2.5", sleep: "0.5-2", runners: "2", concurrency: "8", viewers: "10" }),
    ).toMatchObject({
      sessions: [50, 100],
      maxMinutes: 2.5,
      sleepMin: 0.5,
      sleepMax: 2,
      runners: 2,
      concurrency: 8,
      viewers: 10,
    });
  });

  it.each([
    [{ sessions: "100,50" }, /--sessions: steps must grow/],
    [{ sessions: "20,x" }, /--sessions: "x" is not a whole number/],
    [{ sessions: "0" }, /--sessions: 0 is out of range/],
    [{ sleep: "5-1" }, /--sleep: 5-1: the maximum is below the minimum/],
    [{ sleep: "3" }, /--sleep: "3" is not MIN-MAX/],
    [{ "max-minutes": "-1" }, /--max-minutes: "-1" is not a number/],
    [{ runners: "1.5" }, /--runners: "1.5" is not a whole number/],
  ])("refuses %j with a specific error", (flags, error) => {
    expect(() => parseScaleFlags(flags)).toThrow(error);
  });
});

describe("stepFigures", () => {
  it("takes RSS per agent at the sample with most agents in flight, less the idle runners'", () => {
    const f = stepFigures(input());
    // Peak sample: 420 + 200 MB with 20 agents; idle 400 MB → 220 / 20 = 11 MB per agent, 200 / 20 = 10 of their own trees.
    expect(f.runner_rss).toEqual({ idle_mb: 400, peak_total_mb: 620, peak_agents_in_flight: 20, per_agent_mb: 11, per_agent_tree_mb: 10 });
    expect(f.db_connections).toEqual({ max: 50, mean: 40, max_connections: 268 });
    expect(f.running_steps_max).toBe(20);
    expect(f.throughput).toEqual({ sessions_per_min: 200, steps_per_s: 13.33 });
    expect(f.cpu_pct).toEqual({ web: 10, runners: 50, postgres: 20 });
    expect(f.machine_busy_pct).toBe(50);
    expect(f.started_in_s).toBe(4);
    expect(f.pickup_ms).toMatchObject({ n: 4, p50: 25, max: 40 });
    expect(f.inbox_count).toEqual({ streams: 50, reads_per_s: 5 });
  });

  it("has no per-agent figure and null latencies when nothing ran or nothing was measured", () => {
    const f = stepFigures(input({ samples: [], pickupMs: [], sseLagMs: [], dashboardListMs: [] }));
    expect(f.runner_rss.per_agent_mb).toBeNull();
    expect(f.pickup_ms).toBeNull();
    expect(f.sse_lag_ms).toBeNull();
    expect(f.db_connections.max).toBe(0);
  });
});

describe("findKnee and limitsOf", () => {
  it("is the first N whose pickup p99 passes 2x the smallest N's (and by 50 ms at least)", () => {
    const knee = findKnee([step(200, 100, 40), step(400, 180, 60), step(800, 260, 70), step(1600, 900, 90)]);
    expect(knee.sessions).toBe(800);
    expect(knee.reasons).toEqual(["pickup p99 260 ms > 2x the smallest N's 100 ms"]);
  });

  it("takes the SSE lag as well, and passing 1 s is a knee even at the smallest N", () => {
    expect(findKnee([step(200, 100, 40), step(400, 120, 95)]).reasons).toEqual(["SSE lag p95 95 ms > 2x the smallest N's 40 ms"]);
    expect(findKnee([step(200, 1_500, 40), step(400, 1_600, 40)])).toMatchObject({
      sessions: 200,
      reasons: ["pickup p99 1500 ms > 1000 ms"],
    });
  });

  it("ignores doubling of tiny figures (under 50 ms of growth) and reports no knee with the largest N's limits", () => {
    const knee = findKnee([step(200, 5, 3), step(400, 20, 12)]);
    expect(knee.sessions).toBeNull();
    expect(knee.limits).toEqual(["none seen: slots, connections and CPU all had room"]);
  });

  it("says when the CPU that limits a step was mostly other processes'", () => {
    const crowded = step(200, 100, 40, { machineBusy: 1, cpuMs: { runners: 12_000, web: 3_000 } });
    expect(limitsOf(crowded)).toEqual([
      "CPU: the machine's 2 cores 100% busy; most used by runners 20%, web 5% (% of one core); the run's processes 25% of the 200% used: mostly other processes",
    ]);
  });

  it("names the slots, the connections, the CPU (and which process) and the errors that limit a step", () => {
    const limited = step(800, 100, 40, {
      samples: [{ runnerRssKb: 1, agentRssKb: 1, agentTrees: 200, runningSteps: 200, dbConnections: 250 }],
      machineBusy: 0.97,
      cpuMs: { web: 12_000, runners: 60_000, postgres: 30_000 },
      errors: { step_timeout: 3 },
    });
    expect(limitsOf(limited)).toEqual([
      "runner concurrency slots: 200 steps running of 200 slots",
      "database connections: 250 of max_connections 268",
      "CPU: the machine's 2 cores 97% busy; most used by runners 100%, postgres 50%, web 20% (% of one core); the run's processes 170% of the 194% used",
      "errors: step_timeout 3",
    ]);
  });
});

describe("the report", () => {
  it("holds the options, the rule, every step, the knee and what was skipped; its file is named by date; its summary has a line per step", () => {
    const steps = [step(200, 100, 40), step(400, 300, 50)];
    const report = scaleReport(DEFAULT_SCALE_OPTIONS, steps, [{ sessions: 800, reason: "time budget" }], { host: "x" });
    const round = JSON.parse(JSON.stringify(report)) as typeof report;
    expect(Object.keys(round).sort()).toEqual(["kind", "knee", "knee_rule", "meta", "options", "skipped", "steps"]);
    expect(round.kind).toBe("scale");
    expect(round.knee_rule).toEqual({ ratio: 2, minGrowthMs: 50, absoluteMs: 1_000 });
    expect(round.knee.sessions).toBe(400);
    expect(Object.keys(round.steps[0]!).sort()).toEqual(
      [
        "approved",
        "completed",
        "cores",
        "cpu_pct",
        "dashboard_list_ms",
        "db_connections",
        "duration_s",
        "errors",
        "inbox_count",
        "machine_busy_pct",
        "pickup_ms",
        "runner_rss",
        "running_steps_max",
        "sessions",
        "slots",
        "sse_lag_ms",
        "started_in_s",
        "throughput",
      ].sort(),
    );
    expect(reportFileName(new Date("2026-11-29T08:40:12Z"))).toBe("scale-2026-11-29-08-40.json");
    const lines = scaleSummaryLines(report);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      /^N=200: pickup p99 100 ms, SSE lag p95 40 ms, dashboard list p95 100 ms, inbox count reads 5\/s for 50 pages, errors 0, RSS\/agent 11 MB/,
    );
    expect(lines[2]).toBe("N=800: not run (time budget)");
    expect(lines[3]).toMatch(/^knee: N=400 \(pickup p99 300 ms > 2x the smallest N's 100 ms\)/);
  });
});
