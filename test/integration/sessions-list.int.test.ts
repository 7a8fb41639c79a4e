// The one session list (server/sessions/list.ts) on a real database: filters, search and
// keyset pages both ways without gaps or repeats, and the proof that the tRPC procedure
// (API and CLI), the dashboard's loader and the benchmark's call are the same list: the
// same rows for the same filters and page, paged by the same rule.
import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { loadDashboard, parseDashboardQuery, sessionFilters, type DashboardQuery } from "../../app/_lib/dashboard";
import type { CurrentUser } from "../../server/auth/request";
import { countSessionsByState, listSessions } from "../../server/sessions/list";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
let viewer: CurrentUser;
let projectId: string;
const agents = { coder: [{ reply: "p" }], reviewer: [{ reply: "r" }], tester: [{ reply: "t" }] };

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
  viewer = await api.user("viewer");
  projectId = await h.project("list", agents);
});

describe("session list: filters, search and keyset pages", () => {
  const runId = crypto.randomBytes(3).toString("hex");
  const ids: string[] = [];
  const base = { workflow: "review_loop", workflowVersion: 1, maxIterations: 3, agents: {} };
  const project = (id: string) => ({ id, name: id, repoPath: "/nowhere", baseCommit: "0".repeat(40), allowlist: [] });

  beforeAll(async () => {
    // 30 sessions: alternating projects and starters, three states, searchable prompts.
    for (let i = 0; i < 30; i++) {
      const id = `list-${runId}-${String(i).padStart(2, "0")}`;
      const actor = { kind: "user" as const, id: i % 3 === 0 ? `alice-${runId}` : `bob-${runId}` };
      await db.store.append(
        id,
        "no_stream",
        [
          {
            type: "SessionCreated",
            data: { title: `List ${runId} #${i}${i === 7 ? " 100%_done" : ""}`, workflow: "review_loop", state: "start" },
          },
          {
            type: "TaskStarted",
            data: {
              ...base,
              mode: i % 2 ? "implementation" : "proposal",
              prompt: i === 11 ? `needle-${runId} in a haystack` : "plain prompt",
              project: project(`p-${runId}-${i % 2}`),
            },
          },
          ...(i % 5 === 0 ? [{ type: "SessionStateChanged", data: { from: "start", to: "approved" } }] : []),
        ],
        { actor },
      );
      ids.push(id);
    }
  });

  const mine = { projectId: undefined as string | undefined, q: `List ${runId}` };

  it("pages newest first by keyset, both ways, without gaps or repeats", async () => {
    const seen: string[] = [];
    let page = await listSessions(db.pool, mine, { limit: 7 });
    expect(page.hasNewer).toBe(false);
    seen.push(...page.rows.map((r) => r.id));
    while (page.hasOlder) {
      page = await listSessions(db.pool, mine, { limit: 7, after: page.rows.at(-1)!.id });
      seen.push(...page.rows.map((r) => r.id));
    }
    expect(seen).toEqual([...ids].reverse());
    const back = await listSessions(db.pool, mine, { limit: 7, before: page.rows[0]!.id });
    expect(back.rows.map((r) => r.id)).toEqual(
      [...ids].reverse().slice(seen.length - page.rows.length - 7, seen.length - page.rows.length),
    );
    expect(back.hasOlder).toBe(true);
  });

  it("an unknown cursor is an error, not an empty page; the oldest row's cursor is an empty page", async () => {
    await expect(listSessions(db.pool, mine, { limit: 7, after: "s-no-such-session" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringMatching(/unknown cursor "s-no-such-session"/),
    });
    const oldest = ids[0]!;
    expect((await listSessions(db.pool, mine, { limit: 7, after: oldest })).rows).toEqual([]);
  });

  it("filters by state, project, starter and searches titles and prompts (% and _ literally)", async () => {
    const project1 = await listSessions(db.pool, { projectId: `p-${runId}-1` }, { limit: 100 });
    expect(project1.rows).toHaveLength(15);
    expect(project1.rows.every((r) => r.mode === "implementation" && r.iteration === 1)).toBe(true);
    const approved = await listSessions(db.pool, { ...mine, state: "approved" }, { limit: 100 });
    expect(approved.rows.map((r) => r.id).sort()).toEqual(ids.filter((_, i) => i % 5 === 0));
    const alice = await listSessions(db.pool, { ...mine, createdBy: `user:alice-${runId}` }, { limit: 100 });
    expect(alice.rows).toHaveLength(10);
    expect((await listSessions(db.pool, { q: `needle-${runId}` })).rows.map((r) => r.id)).toEqual([ids[11]]);
    expect((await listSessions(db.pool, { q: `${runId} #7 100%_d` })).rows.map((r) => r.id)).toEqual([ids[7]]);
    expect((await listSessions(db.pool, { q: `${runId} #7 100__d` })).rows).toEqual([]);
    expect(await countSessionsByState(db.pool, { ...mine, state: "approved" })).toEqual([
      { state: "start", count: 24 },
      { state: "approved", count: 6 },
    ]);
  });
});

describe("sessions.list (the procedure)", () => {
  it("filters by state, workflow and creator, newest first, and pages with a cursor without gaps or repeats", async () => {
    const other = await api.user("operator");
    const mine: string[] = [];
    for (let i = 0; i < 5; i++)
      mine.push((await api.caller(other).tasks.start({ projectId, prompt: `page ${i}`, mode: "proposal" })).sessionId);
    const read = api.caller(viewer).sessions;
    const createdBy = `user:${other.id}`;

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof read.list>> = await read.list({ createdBy, limit: 2, cursor });
      seen.push(...page.items.map((s) => s.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...mine].reverse());

    const first = (await read.list({ createdBy, limit: 1 })).items[0]!;
    expect(first).toMatchObject({ id: mine[4], workflow: "review_loop", state: "proposal_coder", createdBy, parentId: null });
    expect(first.version).toBeGreaterThan(0);
    expect(Number.isNaN(Date.parse(first.updatedAt))).toBe(false);
    expect((await read.list({ createdBy, state: "approved" })).items).toEqual([]);
    expect((await read.list({ createdBy, workflow: "planning" })).items).toEqual([]);
    expect((await read.list({ createdBy, workflow: "review_loop", state: "proposal_coder" })).items).toHaveLength(5);
  });
});

describe("one list for the API, the dashboard and the benchmark", () => {
  const runId = crypto.randomBytes(3).toString("hex");
  let starter: CurrentUser;
  const started: string[] = [];

  beforeAll(async () => {
    starter = await api.user("operator");
    const op = api.caller(starter);
    for (let i = 0; i < 9; i++)
      started.push((await op.tasks.start({ projectId, prompt: `same list ${runId} #${i}`, mode: "proposal" })).sessionId);
  });

  /** The three readers of the list, asked for the same page: ids in order, and the paging flags. */
  async function readAllThree(query: DashboardQuery) {
    const filters = sessionFilters(query, starter.id);
    const page = { after: query.after, before: query.before, limit: query.limit };
    const api_ = await api.caller(starter).sessions.list({ ...filters, ...page });
    const dashboard = await loadDashboard(api.caller(starter), query, starter);
    const bench = await listSessions(db.pool, filters, page);
    return {
      api: { ids: api_.items.map((s) => s.id), hasNewer: api_.hasNewer, hasOlder: api_.hasOlder },
      dashboard: { ids: dashboard.sessions.map((s) => s.id), hasNewer: dashboard.hasNewer, hasOlder: dashboard.hasOlder },
      bench: { ids: bench.rows.map((r) => r.id), hasNewer: bench.hasNewer, hasOlder: bench.hasOlder },
    };
  }

  it("gives the same rows, in the same order, with the same paging, page by page both ways", async () => {
    const base = parseDashboardQuery({ q: `same list ${runId}`, mine: "1", limit: "25" });
    const newestFirst = [...started].reverse();
    const first = await readAllThree(base);
    expect(first.api).toEqual(first.bench);
    expect(first.dashboard).toEqual(first.bench);
    expect(first.bench.ids).toEqual(newestFirst);

    // Pages of 2 (the API and the bench take any limit; the dashboard's URL offers 25/50/100).
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const q = { ...base, limit: 2, after };
      const three = await readAllThree(q);
      expect(three.api).toEqual(three.bench);
      expect(three.dashboard).toEqual(three.bench);
      seen.push(...three.bench.ids);
      if (!three.bench.hasOlder) break;
      after = three.bench.ids.at(-1);
    }
    expect(seen).toEqual(newestFirst);
    const back = await readAllThree({ ...base, limit: 2, after: undefined, before: newestFirst[6] });
    expect(back.api).toEqual(back.bench);
    expect(back.dashboard).toEqual(back.bench);
    expect(back.bench.ids).toEqual(newestFirst.slice(4, 6));
  });

  it("the API's nextCursor is the dashboard's next page, and both name the starter", async () => {
    const list = await api.caller(viewer).sessions.list({ q: `same list ${runId}`, limit: 4 });
    expect(list.nextCursor).toBe(list.items.at(-1)!.id);
    const next = await api.caller(viewer).sessions.list({ q: `same list ${runId}`, limit: 4, cursor: list.nextCursor });
    const query = parseDashboardQuery({ q: `same list ${runId}`, after: list.nextCursor! });
    const dashboard = await loadDashboard(api.caller(viewer), { ...query, limit: 4 }, viewer);
    expect(dashboard.sessions.map((s) => s.id)).toEqual(next.items.map((s) => s.id));
    expect(list.names[`user:${starter.id}`]).toBe(starter.name);
    expect(dashboard.sessions.every((s) => s.startedBy === starter.name && !s.mine)).toBe(true);
  });

  it("counts what it lists: sessions.counts matches the rows under the same filters", async () => {
    const filters = { q: `same list ${runId}` };
    const counts = await api.caller(viewer).sessions.counts(filters);
    const rows = (await listSessions(db.pool, filters, { limit: 200 })).rows;
    expect(counts.matching).toBe(rows.length);
    expect(counts.filteredByState).toEqual(await countSessionsByState(db.pool, filters));
    expect(counts.total).toBeGreaterThanOrEqual(rows.length);
  });
});
