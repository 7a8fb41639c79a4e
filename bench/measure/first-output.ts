// first_output_ms: what a person waits for after pressing Confirm, until the coder's first
// line is on their screen. The production web app (`next start`, bench/lib/web-app.ts) and
// Debian's chromium, signed in as an operator; a runner process of its own as production runs
// it (server/runner/main.ts, bench/lib/runner-process.ts: the application's step kinds,
// LISTEN/NOTIFY, real git worktrees) on the demo repository. The coder is a command agent run in the sandbox as in
// production (bubblewrap where the runner uses it by default, see sandbox_overhead) that
// prints one line at once: `date '+first output %s%N'`, its own reading of the system clock
// as it starts, then reads its prompt and works on (sleeps) as a coder would, so that
// nothing but the streamer itself records the line. Each sample is a proposal-mode review-loop session
// whose roundtable has run (scripted reviewer and tester), waiting for confirm; its page is
// opened in a new tab, the live connection is let open, the Confirm dialog is opened, and once
// what animated as the page opened has come to rest (as after reading the proposal) its action is
// clicked, and the sample is the click → the first frame rendered after the streamed line
// showed in the running step's output (the "who is working" bar). The session is then
// cancelled.
//
// Stages, each from marks on one clock (bench/lib/page-clock.ts):
//   request → committed      the click → the confirm's transaction (recorded_at of the
//                            building step's StepScheduled: its transaction's start)
//   committed → claimed      → the claim's transaction (recorded_at of StepStarted)
//   claimed → process        → the agent's first instruction (the time `date` printed):
//                            the workspace, the sandbox, the spawn
//   process → recorded       → the first AgentOutputStreamed's transaction (recorded_at)
//   recorded → painted       → the frame after the line showed, in the page
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { DEMO_ALLOWLIST } from "../../server/demo/content";
import { ensureDemoRepo } from "../../server/demo/repo";
import { upsertProject } from "../../server/projects/projects";
import { sandboxStatus } from "../../server/process/sandbox";
import { cancelTask, startTask } from "../../server/tasks/commands";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { databaseClockOffset, now, pageClockOffset } from "../lib/page-clock";
import { percentiles, round } from "../lib/percentiles";
import { settleDatabase } from "../lib/pg-counters";
import { startRunnerProcess } from "../lib/runner-process";
import { sleep } from "../lib/timing";
import { ensureBuild, withSignedInBrowser } from "../lib/web-app";

const WARM_UP = 3;
const SAMPLES = 30;
const PROJECT_ID = "bench-first-output";
const READY_TIMEOUT_MS = 120_000;
const PAINT_TIMEOUT_MS = 15_000;
const TARGET_P95_MS = 150;
/** The line the stand-in coder prints: its own start, in ns since the epoch. */
const FIRST_LINE = /first output (\d{19})/;

/** At most this long for the page's animations to end before Confirm is clicked (the live marks end within 5 s). */
const REST_TIMEOUT_MS = 8_000;

/**
 * A person reads the proposal before confirming: by then the marks that animated as the page
 * opened have come to rest. Resolves to the animations still running (0 unless it timed out).
 */
const AT_REST = `new Promise((resolve) => {
  const deadline = performance.now() + ${REST_TIMEOUT_MS};
  const running = () => document.getAnimations().filter((a) => a.playState === "running").length;
  const check = () => (running() > 0 && performance.now() < deadline ? setTimeout(check, 100) : resolve(running()));
  check();
})`;

/** Installed before the page's scripts: the click on Confirm's action, the live connection, the line painted. */
const INSTRUMENT = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  const marks = (window.__firstOutput = {});
  const Native = window.EventSource;
  window.EventSource = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => (marks.sseOpen ??= now()));
    }
  };
  document.addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest('[data-testid="confirm-dialog-action"]')) marks.click ??= now();
  }, true);
  const seen = () => {
    if (marks.dom !== undefined) return;
    const out = document.querySelector('[data-testid="streaming-output"]');
    if (!out || !/first output \\d{19}/.test(out.textContent ?? "")) return;
    marks.dom = now();
    marks.text = out.textContent;
    requestAnimationFrame(() => {
      marks.frame = now();
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        marks.painted = now();
        marks.onPainted?.();
      };
      channel.port2.postMessage(null);
    });
  };
  const observer = new MutationObserver(seen);
  const start = () => observer.observe(document.documentElement, { childList: true, subtree: true, characterData: true });
  if (document.documentElement) start();
  else document.addEventListener("readystatechange", start, { once: true });
})();`;

interface PageMarks {
  click?: number;
  sseOpen?: number;
  dom?: number;
  frame?: number;
  painted?: number;
  text?: string;
}

/**
 * The page's marks once the line is painted (or `timeoutMs` passed): one call that the page
 * answers itself, so that no polling from here takes the page's CPU while it is timed.
 */
const paintedMarks = (page: Page, timeoutMs: number): Promise<PageMarks> =>
  // A string, not a function: the bench's compiled helpers are not defined in the page.
  page.evaluate(`new Promise((resolve) => {
    const marks = window.__firstOutput;
    const done = () => resolve({ ...marks, onPainted: undefined });
    if (marks.painted !== undefined) return done();
    marks.onPainted = done;
    setTimeout(done, ${timeoutMs});
  })`);

/** The building step's marks from the session's events (the system clock, ms): scheduled, claimed, first output recorded. */
async function recordedMarks(ctx: Parameters<Measurement["run"]>[0], sessionId: string, afterVersion: number) {
  const { rows } = await ctx.pool.query<{ type: string; step: string | null; kind: string | null; seq: number | null; ms: number }>(
    `SELECT type, coalesce(data->>'stepId', data->>'id') AS step, data->>'kind' AS kind, (data->>'seq')::int AS seq,
            (extract(epoch FROM recorded_at) * 1000)::float8 AS ms
       FROM events WHERE stream_id = $1 AND version > $2 ORDER BY version`,
    [sessionId, afterVersion],
  );
  const scheduled = rows.find((r) => r.type === "StepScheduled");
  const started = rows.find((r) => r.type === "StepStarted" && r.step === scheduled?.step);
  const streamed = rows.find((r) => r.type === "AgentOutputStreamed" && r.step === scheduled?.step && r.seq === 0);
  if (!scheduled || !started || !streamed)
    throw new Error(`session ${sessionId}: the building step's events are incomplete: ${JSON.stringify(rows.map((r) => r.type))}`);
  return { stepId: scheduled.step!, scheduled: scheduled.ms, claimed: started.ms, recorded: streamed.ms };
}

export const firstOutput: Measurement = {
  name: "first_output",
  keys: ["first_output_ms"],
  async run(ctx) {
    ensureBuild((line) => ctx.log(`first_output: ${line}`));
    const sandbox = sandboxStatus({ ...process.env, CATCAFE_SANDBOX: undefined });
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-first-output-"));
    let runner: ReturnType<typeof startRunnerProcess> | null = null;
    try {
      const repo = await ensureDemoRepo(root);
      await upsertProject(ctx.pool, {
        id: PROJECT_ID,
        name: "bench: first output of a command coder",
        repoPath: repo.path,
        allowlist: DEMO_ALLOWLIST,
        agents: {
          coder: { kind: "command", id: "coder-first-line", argv: ["sh", "-c", "date '+first output %s%N'; cat > /dev/null; sleep 5"] },
          reviewer: {
            kind: "scripted",
            id: "reviewer-bench",
            responses: [{ reply: JSON.stringify({ decision: "approve", summary: "Fine.", findings: [] }) }],
          },
          tester: { kind: "scripted", id: "tester-bench", responses: [{ reply: "Testable as it is." }] },
        },
      });
      runner = startRunnerProcess(ctx.url, root, "bench-first-output", (line) => ctx.log(`first_output: ${line}`));
      // Every sample's session through its roundtable first, so that the runner is idle while measured.
      const sessions: string[] = [];
      for (let i = 0; i < WARM_UP + SAMPLES; i++) {
        const { sessionId } = await startTask(
          { store: ctx.store, pool: ctx.pool },
          { projectId: PROJECT_ID, prompt: `Fix slugify() (first output ${i})`, mode: "proposal" },
          benchActor,
        );
        sessions.push(sessionId);
      }
      const deadline = now() + READY_TIMEOUT_MS;
      for (;;) {
        const { rows } = await ctx.pool.query<{ waiting: number; failed: number }>(
          `SELECT count(*) FILTER (WHERE state = 'awaiting_operator_confirm')::int AS waiting,
                  count(*) FILTER (WHERE state IN ('failed', 'cancelled'))::int AS failed
             FROM sessions WHERE id = ANY($1)`,
          [sessions],
        );
        if (rows[0]!.failed > 0) throw new Error(`${rows[0]!.failed} sessions failed their roundtable`);
        if (rows[0]!.waiting === sessions.length) break;
        if (now() > deadline) throw new Error(`only ${rows[0]!.waiting} of ${sessions.length} sessions reached confirm`);
        await sleep(100);
      }
      // Timed on a settled database: the earlier measures' vacuum and checkpoint are not this one's.
      await settleDatabase(ctx.pool);
      return await withSignedInBrowser(ctx.url, async (context, web) => {
        const rows: Array<{
          click: number;
          scheduled: number;
          claimed: number;
          process: number;
          recorded: number;
          painted: number;
        }> = [];
        const clocks: Array<{ page: number; database: number; roundTrip: number }> = [];
        for (const [i, sessionId] of sessions.entries()) {
          const { rows: version } = await ctx.pool.query<{ version: number }>("SELECT version FROM streams WHERE id = $1", [sessionId]);
          const before = Number(version[0]!.version);
          const page = await context.newPage();
          await page.addInitScript(INSTRUMENT);
          const response = await page.goto(`${web.url}/sessions/${sessionId}`, { waitUntil: "load" });
          if (!response?.ok()) throw new Error(`the session page answered HTTP ${response?.status()}`);
          // A person reads the proposal before confirming: the page is hydrated and live, and
          // what animated as it opened has come to rest (AT_REST).
          await page.waitForFunction(() => (window as unknown as { __firstOutput: PageMarks }).__firstOutput.sseOpen !== undefined);
          const action = page.getByTestId("confirm-dialog-action");
          for (let tries = 0; !(await action.isVisible()); tries++) {
            if (tries > 50) throw new Error(`session ${sessionId}: the Confirm dialog did not open`);
            await page.getByTestId("confirm-button").click();
            await sleep(100);
          }
          const stillAnimating = (await page.evaluate(AT_REST)) as number;
          if (stillAnimating > 0)
            throw new Error(`session ${sessionId}: ${stillAnimating} animations still ran after ${REST_TIMEOUT_MS} ms`);
          const pageClock = await pageClockOffset(page);
          const dbClock = await databaseClockOffset(ctx.pool);
          clocks.push({
            page: pageClock.offsetMs,
            database: dbClock.offsetMs,
            roundTrip: Math.max(pageClock.roundTripMs, dbClock.roundTripMs),
          });
          await action.click();
          const marks = await paintedMarks(page, PAINT_TIMEOUT_MS);
          if (marks.painted === undefined)
            throw new Error(`session ${sessionId}: the first line was not painted (marks ${JSON.stringify(marks)})`);
          const recorded = await recordedMarks(ctx, sessionId, before);
          const printed = FIRST_LINE.exec(marks.text ?? "")?.[1];
          if (!printed) throw new Error(`session ${sessionId}: no first line in ${JSON.stringify(marks.text)}`);
          // Everything on our clock: the page's marks less its offset, the system clock's less the database's.
          const fromPage = (t: number) => t - pageClock.offsetMs;
          const fromSystem = (t: number) => t - dbClock.offsetMs;
          if (i >= WARM_UP)
            rows.push({
              click: fromPage(marks.click!),
              scheduled: fromSystem(recorded.scheduled),
              claimed: fromSystem(recorded.claimed),
              process: fromSystem(Number(BigInt(printed) / 1000n) / 1000),
              recorded: fromSystem(recorded.recorded),
              painted: fromPage(marks.painted),
            });
          await page.close();
          await cancelTask({ store: ctx.store, pool: ctx.pool }, { sessionId, reason: "bench: measured" }, benchActor).catch(() => {});
        }

        const total = percentiles(rows.map((r) => r.painted - r.click));
        const stage = (from: keyof (typeof rows)[number], to: keyof (typeof rows)[number]) => {
          const s = percentiles(rows.map((r) => r[to] - r[from]));
          return { p50: s.p50, p95: s.p95, max: s.max };
        };
        const stages = {
          request_to_committed: stage("click", "scheduled"),
          committed_to_claimed: stage("scheduled", "claimed"),
          claimed_to_process_started: stage("claimed", "process"),
          process_to_first_output_recorded: stage("process", "recorded"),
          recorded_to_painted: stage("recorded", "painted"),
        };
        ctx.note("first_output", {
          measured:
            "Confirm's dialog action clicked on an open, live session page at rest (chromium; the marks that animated as it opened ended, as after reading the proposal) → the coder's first line (a command agent printing at once, in the sandbox) painted in the running step's output",
          sandbox: sandbox.available ? "bubblewrap" : `none: ${sandbox.reason ?? "unavailable"}`,
          warm_up: WARM_UP,
          click_to_painted: total,
          stages,
          runner: "a runner process of its own (server/runner/main.ts), as production runs it",
          stage_marks:
            "click: the page (capture listener); committed: recorded_at of the building step's StepScheduled (its transaction's start); claimed: recorded_at of its StepStarted; process: the time `date` printed inside the sandbox; recorded: recorded_at of its first AgentOutputStreamed; painted: the frame after the line showed in the page",
          clock: {
            method:
              "performance.timeOrigin + performance.now() here and in the page, corrected per sample; the system clock (recorded_at, date) by PostgreSQL's clock_timestamp() offset",
            page_offset_ms: {
              min: round(Math.min(...clocks.map((c) => c.page)), 3),
              max: round(Math.max(...clocks.map((c) => c.page)), 3),
            },
            database_offset_ms: {
              min: round(Math.min(...clocks.map((c) => c.database)), 3),
              max: round(Math.max(...clocks.map((c) => c.database)), 3),
            },
            worst_best_round_trip_ms: round(Math.max(...clocks.map((c) => c.roundTrip)), 3),
          },
        });
        return {
          first_output_ms: {
            p50: total.p50,
            p95: total.p95,
            n: total.n,
            max: total.max,
            target_p95: TARGET_P95_MS,
            met: total.p95 <= TARGET_P95_MS,
            stages_p50: Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, v.p50])),
            stages_p95: Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, v.p95])),
          },
        };
      });
    } finally {
      await runner?.stop();
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};
