// dashboard_list_ms: the dashboard's own query (server/sessions/list.ts) over 10,000
// sessions in 20 projects started by 10 people: the first page, a deep page (keyset after
// row ~9,000), a state filter, a project filter, "mine", a search of titles and prompts
// (ILIKE, served by the pg_trgm indexes) and the counts by state. Medians of repeated
// reads after a warm-up, once the table was vacuumed and analyzed as autovacuum would after
// such a burst of inserts. (Until then new rows sit in the GIN indexes' pending list, the
// planner prices the trigram scan above a sequential scan, and a rare search reads every
// row: that figure is kept in the notes as search_before_vacuum.)
import crypto from "node:crypto";
import { performance } from "node:perf_hooks";
import { countSessionsByState, listSessions, type SessionFilters } from "../../server/sessions/list";
import type { Measurement } from "../lib/context";
import { percentiles } from "../lib/percentiles";
import { taskStartedData } from "../lib/task-fixtures";

const SESSIONS = 10_000;
const WRITERS = 8;
const READS = 20;
const STATES = [
  "awaiting_operator_confirm",
  "building",
  "reviewing",
  "approved",
  "approved",
  "approved",
  "max_iterations_reached",
  "cancelled",
];

async function median(op: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  await op();
  const times: number[] = [];
  for (let i = 0; i < READS; i++) {
    const t0 = performance.now();
    await op();
    times.push(performance.now() - t0);
  }
  const s = percentiles(times);
  return { p50: s.p50, p95: s.p95 };
}

export const dashboardList: Measurement = {
  name: "dashboard_list",
  keys: ["dashboard_list_ms"],
  async run(ctx) {
    const run = crypto.randomBytes(3).toString("hex");
    const t0 = performance.now();
    let next = 0;
    const writer = async () => {
      for (let i = next++; i < SESSIONS; i = next++) {
        const id = `bench-dash-${run}-${String(i).padStart(5, "0")}`;
        const state = STATES[i % STATES.length]!;
        const word = i === 4321 ? `zebracorn-${run}` : ["slug", "accents", "cache", "login", "export"][i % 5];
        await ctx.store.append(
          id,
          "no_stream",
          [
            { type: "SessionCreated", data: { title: `Fix ${word} handling #${i}`, workflow: "review_loop", state: "start" } },
            {
              type: "TaskStarted",
              data: taskStartedData(
                `proj-${i % 20}`,
                `Please fix the ${word} bug reported in issue ${i}. Keep the tests green.`,
                i % 3 ? "implementation" : "proposal",
              ),
            },
            { type: "SessionStateChanged", data: { from: "start", to: state, reason: "bench" } },
          ],
          { actor: { kind: "user", id: `00000000-0000-4000-8000-${String(i % 10).padStart(12, "0")}` } },
        );
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    const seedMs = Math.round(performance.now() - t0);
    await ctx.pool.query("ANALYZE sessions");
    const searchBeforeVacuum = await median(() => listSessions(ctx.pool, { q: `zebracorn-${run}` }, { limit: 50 }));
    await ctx.pool.query("VACUUM ANALYZE sessions");
    ctx.log(`dashboard_list: seeded ${SESSIONS} sessions in ${seedMs} ms`);
    // Statistics as a database in use has them (autovacuum analyzes a table that grew this
    // much): the plans measured are the ones users get, not those of the tables' first rows.
    await ctx.pool.query("ANALYZE sessions, streams, events");

    const mine: SessionFilters = { createdBy: "user:00000000-0000-4000-8000-000000000003" };
    const deepCursor = (
      await ctx.pool.query<{ id: string }>("SELECT id FROM sessions ORDER BY created_at DESC, id DESC OFFSET 9000 LIMIT 1")
    ).rows[0]!.id;
    const first = await median(() => listSessions(ctx.pool, {}, { limit: 50 }));
    const deep = await median(() => listSessions(ctx.pool, {}, { limit: 50, after: deepCursor }));
    const byState = await median(() => listSessions(ctx.pool, { state: "max_iterations_reached" }, { limit: 50 }));
    const byProject = await median(() => listSessions(ctx.pool, { projectId: "proj-7" }, { limit: 50 }));
    const byStarter = await median(() => listSessions(ctx.pool, mine, { limit: 50 }));
    const searchRare = await median(() => listSessions(ctx.pool, { q: `zebracorn-${run}` }, { limit: 50 }));
    const searchCommon = await median(() => listSessions(ctx.pool, { q: "accents" }, { limit: 50 }));
    const counts = await median(() => countSessionsByState(ctx.pool, {}));
    const countsFiltered = await median(() => countSessionsByState(ctx.pool, { projectId: "proj-7", q: "cache" }));
    const found = await listSessions(ctx.pool, { q: `zebracorn-${run}` });
    const plan = await ctx.pool.query<{ "QUERY PLAN": string }>(
      `EXPLAIN SELECT s.id FROM sessions s JOIN streams st ON st.id = s.id WHERE (s.title ILIKE $1 OR s.prompt ILIKE $1) ORDER BY s.created_at DESC, s.id DESC LIMIT 51`,
      [`%zebracorn-${run}%`],
    );
    ctx.note("dashboard_list", {
      sessions: SESSIONS,
      seed_ms: seedMs,
      first_page: first,
      deep_page_after_9000: deep,
      state_filter: byState,
      project_filter: byProject,
      mine_filter: byStarter,
      search_rare: searchRare,
      search_before_vacuum: searchBeforeVacuum,
      search_common: searchCommon,
      counts_by_state: counts,
      counts_filtered: countsFiltered,
      search_found: found.rows.length,
      search_plan: plan.rows.map((r) => r["QUERY PLAN"].trim()).slice(0, 6),
    });
    return {
      dashboard_list_ms: {
        first_page: first.p50,
        deep_page: deep.p50,
        state_filter: byState.p50,
        project_filter: byProject.p50,
        mine_filter: byStarter.p50,
        search: searchRare.p50,
        search_common: searchCommon.p50,
        counts_by_state: counts.p50,
      },
    };
  },
};
