// Upgrades (docs/operations.md, "Upgrades"): a database written by the previous release
// (test/fixtures/upgrade/previous-release.tar.gz, made by make-fixture.ts with that release's
// own code) is loaded at its migration level, today's migrate runs over it, and then every
// session reads (list, page, timeline, replay at every version), and the ones left waiting or
// interrupted go on to their end with today's runner. The runner's clone of the project has
// only `main`: every session commit it needs comes from the sessions' bundles, as the previous
// release recorded them.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createAppEventStore } from "../../server/app-store";
import { appStepKinds } from "../../server/app-runner";
import { listMigrations, migrate, type MigrateResult } from "../../server/db/migrate";
import { createPool } from "../../server/db/pool";
import { rebuildAndCompare, snapshotProjections } from "../../server/events/rebuild";
import type { RecordedEvent } from "../../server/events/types";
import { webhookTarget } from "../../server/projects/access";
import { listProjectRecords } from "../../server/projects/projects";
import { projectsServed } from "../../server/runner/capabilities";
import { Runner } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { foldTask } from "../../server/task-engine";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { waitForConversation } from "../helpers/conversations";
import type { TestDatabase } from "../helpers/db";
import { gitIn, ofType, tempDir } from "../helpers/tasks";
import { loadUpgradeFixture, type LoadedFixture } from "../helpers/upgrade-fixture";
import { FIXED_SUM } from "../fixtures/upgrade/scripts";

const ARCHIVE = path.resolve(import.meta.dirname, "../fixtures/upgrade/previous-release.tar.gz");
const HOST = "upgraded-host";

let fx: LoadedFixture;
let db: TestDatabase;
let api: ApiFixture;
let migrated: MigrateResult;
let workspacesRoot: string;
/** Each session's state in the sessions table as the previous release left it. */
let statesBefore: Record<string, string>;

beforeAll(async () => {
  const { adminUrl, urlBase } = inject("postgres");
  const workDir = tempDir("catcafe-upgrade-");
  fs.chmodSync(workDir, 0o755);
  workspacesRoot = path.join(workDir, "workspaces");
  fx = await loadUpgradeFixture({ archive: ARCHIVE, adminUrl, urlBase, workDir });
  const pool = createPool(fx.url, 20);
  afterAll(async () => {
    await pool.end();
  });
  const rows = await pool.query<{ id: string; state: string }>("SELECT id, state FROM sessions");
  statesBefore = Object.fromEntries(rows.rows.map((r) => [r.id, r.state]));
  migrated = await migrate(fx.url);
  db = { name: fx.url.split("/").at(-1)!, url: fx.url, pool, store: createAppEventStore(pool) };
  api = createApiFixture(db);
});

const sessions = () => fx.manifest.sessions;
const finished = (events: RecordedEvent[]) => foldTask(events).status === "finished";

async function waitFor(sessionId: string, what: string, done: (events: RecordedEvent[]) => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await db.store.readStream(sessionId);
    if (done(events)) return events;
    if (Date.now() > deadline) throw new Error(`${sessionId}: timed out waiting for ${what}; last: ${events.at(-1)?.type}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Tables, columns, indexes and constraints of the public schema, as comparable text. */
async function schemaOf(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query<{ line: string }>(`
      SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || COALESCE(column_default, '') AS line
        FROM information_schema.columns WHERE table_schema = 'public'
      UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = 'public'
      UNION ALL SELECT c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid)
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public'
      UNION ALL SELECT p.proname || ' ' || md5(pg_get_functiondef(p.oid))
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
      ORDER BY 1`);
    return rows.rows.map((r) => r.line);
  } finally {
    await client.end();
  }
}

let runner: Runner | undefined;
/** Today's runner, on a host of its own, whose clone of the registered repository has only `main`. */
async function startRunner(): Promise<Runner> {
  if (runner) return runner;
  const pool = createPool(fx.url, 8);
  const store = createAppEventStore(pool);
  const repositoryPath = (repoPath: string) => (repoPath === fx.manifest.repoPath ? fx.mainOnlyClone : repoPath);
  const stepKinds = stepKindRegistry(
    appStepKinds({
      pool,
      store,
      workspacesRoot,
      host: HOST,
      repositoryPath,
      webhook: { webhookFor: (id) => webhookTarget(pool, store, id), publicUrl: "http://catcafe.test", requestTimeoutMs: 1_000 },
    }),
  );
  const started = new Runner(store, pool, fx.url, {
    executors: stepKinds.executors,
    react: stepKinds.react,
    onReactionError: stepKinds.onReactionError,
    retryBaseMs: 100,
    leaseMs: 5_000,
    concurrency: 4,
    host: HOST,
    stateDir: path.join(workspacesRoot, "..", "runners"),
    projectsServed: async () => projectsServed(await listProjectRecords(pool), repositoryPath),
  });
  await started.start();
  afterAll(async () => {
    await started.stop();
    await pool.end();
  });
  runner = started;
  return started;
}

describe("a database written by the previous release, upgraded", () => {
  it("loads at the previous release's migration level; today's migrate applies exactly the later migrations, and the schema is a fresh database's", async () => {
    const ours = listMigrations().map((m) => m.name);
    expect(fx.oldMigrations.length).toBeGreaterThan(0);
    // The release's migrations are ours, unchanged (the loader checked each checksum), in order.
    expect(ours.slice(0, fx.oldMigrations.length)).toEqual(fx.oldMigrations);
    expect(migrated).toEqual({ applied: ours.slice(fx.oldMigrations.length), alreadyApplied: fx.oldMigrations.length });
    expect(await migrate(fx.url)).toEqual({ applied: [], alreadyApplied: ours.length });
    const { urlBase, template } = inject("postgres");
    expect(await schemaOf(fx.url)).toEqual(await schemaOf(`${urlBase}${template}`));
    expect(statesBefore).toEqual({
      [sessions().confirm]: "awaiting_operator_confirm",
      [sessions().interrupted]: "building",
      [sessions().approved]: "approved",
      [sessions().failed]: "failed",
      [sessions().forge]: "prd_review",
      [sessions().conversation]: "open",
      [sessions().delivered]: "approved",
      [sessions().fork]: "approved",
    });
  });

  it("every session reads: the list, its page, its timeline and state, replay at every version; the projections rebuilt from the old events equal the migrated rows", async () => {
    const viewer = api.caller(await api.user("viewer"));
    const listed = await viewer.sessions.list({ limit: 50 });
    expect(Object.fromEntries(listed.items.map((r) => [r.id, r.state]))).toEqual(statesBefore);

    const tasks = Object.entries(sessions()).filter(([role]) => role !== "conversation");
    for (const [role, sessionId] of tasks) {
      const page = await viewer.live.session({ sessionId });
      expect(page.status.state, role).toBe(statesBefore[sessionId]);
      expect(page.entries.length, role).toBeGreaterThan(3);
      const timeline = await viewer.sessions.timeline({ sessionId, limit: 1000 });
      const events = await db.store.readStream(sessionId);
      expect(timeline.length, role).toBe(events.length);
      await viewer.sessions.state({ sessionId });
      const head = (await viewer.replay.at({ sessionId })).head;
      expect(head, role).toBe(events.length);
      for (let version = 1; version <= head; version++) {
        const replayed = await viewer.replay.at({ sessionId, version });
        expect(replayed.version).toBe(version);
        expect(replayed.state.fsm, `${role} at ${version}`).toBe(foldTask(events.slice(0, version)).fsm);
      }
    }
    const forge = await viewer.forge.status({ sessionId: sessions().forge });
    expect(forge.waiting).toMatchObject({ stage: "prd", kind: "gate" });
    const delivered = await viewer.sessions.deliveries({ sessionId: sessions().delivered });
    expect(delivered).toEqual([
      expect.objectContaining({
        outcome: expect.objectContaining({
          type: "DeliveryCompleted",
          merged: expect.objectContaining({ how: "fast_forward", target: "release" }),
        }),
      }),
    ]);
    // The repository as the release left it: the merge delivery moved its target.
    const merged = (delivered[0]!.outcome as { commit: string }).commit;
    expect(gitIn(fx.repo, "rev-parse", "refs/heads/release")).toBe(merged);

    const conversation = sessions().conversation;
    const versions = (await db.store.readStream(conversation)).length;
    for (let atVersion = 1; atVersion <= versions; atVersion++) await viewer.conversations.get({ sessionId: conversation, atVersion });
    const now = await viewer.conversations.get({ sessionId: conversation });
    expect(now).toMatchObject({ status: "open", turns: 2, inFlight: [] });
    expect(now.entries.filter((e) => e.kind === "agent").map((e) => e.agent)).toEqual(["ada", "bo"]);

    // Rebuilt from the events with today's folds, every projection row equals the migrated one,
    // but for what a migration chose not to backfill: 20261129024922 gave only pending and running
    // steps their needs (the claim reads nothing else); a rebuild gives every step its needs.
    const before = await snapshotProjections(db.pool, db.store);
    const rebuilt = await rebuildAndCompare(db.store);
    const after = await snapshotProjections(db.pool, db.store);
    expect(rebuilt.changedTables.filter((t) => t !== "steps")).toEqual([]);
    const withoutFinishedNeeds = (rows: string[]) =>
      rows.map((text) => {
        const { needs_repo, needs_cli, needs_labels, ...row } = JSON.parse(text) as Record<string, unknown>;
        return ["pending", "running"].includes(String(row.state)) ? { ...row, needs_repo, needs_cli, needs_labels } : row;
      });
    expect(withoutFinishedNeeds(after.steps!)).toEqual(withoutFinishedNeeds(before.steps!));
  });

  it("with today's runner: the confirm builds to approved, the interrupted build resumes to approved, the Forge's gate passes to completed", async () => {
    await startRunner();
    const operator = api.caller(await api.user("operator"));
    const { confirm, interrupted, forge } = sessions();

    await operator.tasks.confirm({ sessionId: confirm, via: "api" });
    const confirmed = await waitFor(confirm, "approval", finished);
    expect(foldTask(confirmed)).toMatchObject({ status: "finished", outcome: "approved" });
    expect(ofType<{ passed: boolean }>(confirmed, "TestCommandRecorded")).toEqual([expect.objectContaining({ passed: true })]);
    expect(fs.readFileSync(path.join(workspacesRoot, confirm, "src/sum.js"), "utf8")).toBe(FIXED_SUM);

    const resumed = await waitFor(interrupted, "approval", finished);
    expect(foldTask(resumed)).toMatchObject({ status: "finished", outcome: "approved" });
    // The build the old runner released ran again here, once: one coder output, one commit.
    const build = ofType<{ stepId: string; input: { state: string } }>(resumed, "StepScheduled").find((s) => s.input.state === "building")!;
    const starts = ofType<{ stepId: string; runnerId: string }>(resumed, "StepStarted").filter((s) => s.stepId === build.stepId);
    expect(starts).toHaveLength(2);
    expect(ofType<{ role: string }>(resumed, "AgentOutputRecorded").filter((o) => o.role === "coder")).toHaveLength(1);
    expect(ofType<{ host: string }>(resumed, "WorktreePlaced")).toEqual([expect.objectContaining({ host: HOST })]);

    for (let passes = 0; ; passes++) {
      // A PersonNeeded ends the wait too: a stage that failed for good waits for a choice.
      const events = await waitFor(
        forge,
        "a gate or the end",
        (e) => finished(e) || foldTask(e).fsm === "prd_review" || e.at(-1)?.type === "PersonNeeded",
        120_000,
      );
      expect(events.at(-1)?.type === "PersonNeeded" ? events.at(-1)?.data : null, "the Forge asks for a person").toBeNull();
      if (finished(events)) {
        expect(foldTask(events)).toMatchObject({ outcome: "completed" });
        break;
      }
      expect(passes, "the PRD gate keeps coming back").toBeLessThan(4);
      await operator.forge.pass({ sessionId: forge });
      await waitFor(forge, "the gate passed", (e) => foldTask(e).fsm !== "prd_review");
    }
    const rows = await db.pool.query<{ id: string; state: string }>("SELECT id, state FROM sessions WHERE id = ANY($1)", [
      [confirm, interrupted, forge],
    ]);
    expect(Object.fromEntries(rows.rows.map((r) => [r.id, r.state]))).toEqual({
      [confirm]: "approved",
      [interrupted]: "approved",
      [forge]: "completed",
    });
  }, 180_000);

  it("a fork of the approved session builds its worktree from the session's bundles and is approved", async () => {
    await startRunner();
    const operator = api.caller(await api.user("operator"));
    const { approved } = sessions();
    const parent = await db.store.readStream(approved);
    const head = ofType<{ commit: string }>(parent, "WorkspaceCommitted").at(-1)!.commit;
    // The runner's clone never had the approved commit: only the session's bundle holds it.
    const hasHead = () => spawnSync("git", ["cat-file", "-e", `${head}^{commit}`], { cwd: fx.mainOnlyClone, stdio: "ignore" }).status === 0;
    expect(hasHead()).toBe(false);
    const reviewing = parent.find((e) => e.type === "SessionStateChanged" && (e.data as { to: string }).to === "reviewing")!;
    const fork = await operator.sessions.fork({ sessionId: approved, atVersion: reviewing.version, note: "after the upgrade" });
    const done = await waitFor(fork.sessionId, "approval", finished);
    expect(foldTask(done)).toMatchObject({ status: "finished", outcome: "approved" });
    const worktree = path.join(workspacesRoot, fork.sessionId);
    expect(gitIn(worktree, "rev-parse", "HEAD")).toBe(head);
    expect(fs.readFileSync(path.join(worktree, "src/sum.js"), "utf8")).toBe(FIXED_SUM);
    expect(hasHead()).toBe(true);
    expect(ofType<{ host: string; path: string }>(done, "WorktreePlaced")).toEqual([
      { stepId: expect.any(String), host: HOST, path: worktree },
    ]);
  }, 120_000);

  it("the conversation takes a new message and its agent answers", async () => {
    await startRunner();
    const operator = api.caller(await api.user("operator"));
    const { conversation } = sessions();
    await operator.conversations.post({ sessionId: conversation, text: "@bo what comes after the schema?" });
    const { events, loaded } = await waitForConversation(
      db.store,
      conversation,
      "bo's answer",
      (c, ev) => ofType(ev, "AgentReplied").length === 3 && Object.keys(c.state.inFlight).length === 0,
    );
    expect(ofType<{ agent: string; text: string }>(events, "AgentReplied").at(-1)).toMatchObject({
      agent: "bo",
      text: "Then the tests, as the schema settles.",
    });
    expect(loaded.state).toMatchObject({ status: "open", stalled: false });
  }, 60_000);
});
