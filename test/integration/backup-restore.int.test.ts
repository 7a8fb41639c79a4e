// Backup and restore (docs/operations.md, "Backup and restore") on real PostgreSQL, a real
// runner and real git: a backup taken while a build is in flight and another session waits for
// a confirm, restored into a new database, holds every stream's events as they were; the
// finished session replays the same at every position; a fork of it builds its worktree on a
// fresh clone (no commit of the session in it) from the restored bundles; the interrupted build
// is taken over by a runner on the restored database once its lease expires and the task ends;
// the waiting session is confirmed and ends. A changed file, a newer version's backup and a
// target that holds data are refused, naming what is wrong.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { appStepKinds } from "../../server/app-runner";
import { createAppEventStore } from "../../server/app-store";
import { readBackup, restoreBackup } from "../../server/backup/restore-backup";
import { streamHashes } from "../../server/backup/stream-hashes";
import { takeBackup } from "../../server/backup/take-backup";
import { startEmbeddedPostgres } from "../../server/db/embedded";
import { EMBEDDED_DATABASE } from "../../server/db/local";
import { listMigrations, migrate } from "../../server/db/migrate";
import { createPool, type Db } from "../../server/db/pool";
import { webhookTarget } from "../../server/projects/access";
import type { StepExecutor } from "../../server/runner/executors";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { replayAt } from "../../server/sessions/replay";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { forkSession } from "../../server/tasks/fork";
import { createTestDatabase, rejection, testActor, type TestDatabase } from "../helpers/db";
import { freePort } from "../helpers/ports";
import { createHarness, FIXED_SUM, gitIn, ofType, reviewApprove, tempDir, testPlan, type Harness } from "../helpers/tasks";

let source: TestDatabase;
let h: Harness;
let root: string;
/** A clone of the project's main only, made before any session ran: it lacks every session's commit. */
let freshClone: string;
let backupDir: string;
const pools: Db[] = [];

beforeAll(async () => {
  source = await createTestDatabase();
  h = createHarness(source);
  root = tempDir("catcafe-backup-");
  // postgres runs as its own user when we are root: it must reach a data directory in here.
  fs.chmodSync(root, 0o755);
  freshClone = path.join(root, "fresh-clone");
  execFileSync("git", ["clone", "-q", "--no-local", "--single-branch", "--branch", "main", h.repo, freshClone]);
  backupDir = path.join(root, "backup");
});

const deps = (db: TestDatabase) => ({ store: db.store, pool: db.pool });
const finished = (s: { status: string }) => s.status === "finished";
const agents = {
  coder: [{ reply: "Proposal: make sum add." }, { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } }],
  reviewer: [{ reply: "Fine." }, { reply: reviewApprove }],
  tester: [{ reply: "One test is enough." }, { reply: testPlan() }],
};

/** The application's step kinds on `db`, with the project's repository mapped to `clone` and their own workspaces. */
function executorsOn(db: TestDatabase, workspaces: string, clone?: string): Record<string, StepExecutor> {
  const pool = createPool(db.url, 4);
  pools.push(pool);
  const store = createAppEventStore(pool);
  return stepKindRegistry(
    appStepKinds({
      pool,
      store,
      workspacesRoot: workspaces,
      ...(clone ? { repositoryPath: (repoPath: string) => (repoPath === h.repo ? clone : repoPath) } : {}),
      webhook: { webhookFor: (id) => webhookTarget(pool, store, id), publicUrl: "http://catcafe.test", requestTimeoutMs: 1_000 },
    }),
  ).executors;
}

/** Every event row as text, in position order: what "identical" means. */
async function eventRows(db: TestDatabase): Promise<string[]> {
  const r = await db.pool.query<{ row: string }>(
    "SELECT concat_ws('|', position, tx_id, event_id, stream_id, version, type, summary, data::text, metadata::text, recorded_at) AS row FROM events ORDER BY position",
  );
  return r.rows.map((x) => x.row);
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("backup while Cat Cafe runs, restore into a new database", () => {
  it("every stream identical; the finished session replays the same; its fork builds from the restored bundles on a fresh clone; the interrupted build and the waiting session go on to their end", async () => {
    await h.project("bk-done", agents);
    await h.project("bk-wait", agents);
    await h.project("bk-flight", {
      coder: [{ reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    // The source's runner: the application's step kinds, except that bk-flight's build never ends (until the runner stops).
    const own = executorsOn(source, h.workspacesRoot);
    const projectOf = async (sessionId: string) =>
      (await source.pool.query<{ project_id: string }>("SELECT project_id FROM sessions WHERE id = $1", [sessionId])).rows[0]?.project_id;
    const holdFlightBuild: StepExecutor = async (step, ctx) => {
      if ((step.input as { phase?: string }).phase === "build" && (await projectOf(step.sessionId)) === "bk-flight") {
        return new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
      }
      return own.agent!(step, ctx);
    };
    const runnerA = await h.startRunner(undefined, { executors: { ...own, agent: holdFlightBuild }, shutdownGraceMs: 50 });

    const start = (projectId: string, mode: "proposal" | "implementation") =>
      startTask(deps(source), { projectId, prompt: `Fix sum() (${projectId})`, mode }, testActor);
    const done = await start("bk-done", "proposal");
    await h.waitFor(done.sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    await confirmTask(deps(source), { sessionId: done.sessionId, via: "api" }, testActor);
    const doneEnd = await h.waitFor(done.sessionId, "approved", finished);
    expect(doneEnd.outcome).toBe("approved");
    const waiting = await start("bk-wait", "proposal");
    await h.waitFor(waiting.sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    const flight = await start("bk-flight", "implementation");
    const heldStep = await until("bk-flight's build to start", async () => {
      const r = await source.pool.query<{ id: string }>("SELECT id FROM steps WHERE session_id = $1 AND state = 'running'", [
        flight.sessionId,
      ]);
      return r.rows[0]?.id;
    });

    // --- the backup, while the build runs and the runner heartbeats its lease
    const { manifest } = await takeBackup(source.url, backupDir);
    expect(manifest.tables.map((t) => t.name)).toEqual(expect.arrayContaining(["events", "blobs", "streams", "sessions", "steps"]));
    expect(manifest.tables.map((t) => t.name)).not.toContain("_prisma_migrations");
    expect(manifest.tables.find((t) => t.name === "blobs")!.rows).toBeGreaterThan(0);
    const sourceEvents = await eventRows(source);
    const sourceHashes = await streamHashes(source.pool);
    expect(manifest.events.count).toBe(sourceEvents.length);
    expect(manifest.events.streams).toEqual(sourceHashes);

    // --- the restore, into a new (unmigrated) database
    const restored = await createTestDatabase({ migrated: false });
    const result = await restoreBackup(restored.url, backupDir);
    expect(result.migratedUp).toEqual([]);
    expect(result.changedProjections).toEqual([]);
    expect(await eventRows(restored)).toEqual(sourceEvents);
    expect(await streamHashes(restored.pool)).toEqual(sourceHashes);
    for (const t of manifest.tables) {
      const n = await restored.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${t.name}"`);
      expect(n.rows[0]!.n, t.name).toBe(t.rows);
    }
    // The sequence goes on after the restored positions: the next append takes the next one.
    const seq = await restored.pool.query<{ next: string }>("SELECT nextval(pg_get_serial_sequence('events', 'position'))::text AS next");
    expect(Number(seq.rows[0]!.next)).toBe(Number(sourceEvents.at(-1)!.split("|")[0]) + 1);
    // The next transaction's id is past every restored event's (one cluster here, so trivially; a new cluster is advanced).
    const xid = await restored.pool.query<{ ahead: boolean }>(
      "SELECT (pg_current_xact_id()::text)::bigint > max(tx_id) AS ahead FROM events",
    );
    expect(xid.rows[0]!.ahead).toBe(true);
    // Caught in flight: the build is running under runner A's lease, the other session waits.
    const held = await restored.pool.query("SELECT state, lease_owner FROM steps WHERE id = $1", [heldStep]);
    expect(held.rows[0]).toEqual({ state: "running", lease_owner: runnerA.id });
    const sessionRows = await restored.pool.query<{ id: string; state: string }>("SELECT id, state FROM sessions ORDER BY id");
    const sourceSessionRows = await source.pool.query<{ id: string; state: string }>("SELECT id, state FROM sessions ORDER BY id");
    expect(sessionRows.rows).toEqual(sourceSessionRows.rows);

    // The finished session replays the same at every position.
    const head = (await source.store.readStream(done.sessionId)).length;
    for (let version = 1; version <= head; version++) {
      expect(await replayAt(deps(restored), { sessionId: done.sessionId, version }), `replay at ${version}`).toEqual(
        await replayAt(deps(source), { sessionId: done.sessionId, version }),
      );
    }

    // The source's runner goes away; a runner on the restored database, with a fresh clone and
    // fresh workspaces, takes the interrupted build over once runner A's lease expires.
    await runnerA.stop();
    const h2 = createHarness(restored);
    const workspaces = path.join(root, "workspaces-restored");
    const headCommit = doneEnd.status === "finished" ? doneEnd.head! : "";
    expect(() => execFileSync("git", ["-C", freshClone, "cat-file", "-e", `${headCommit}^{commit}`], { stdio: "ignore" })).toThrow();
    await h2.startRunner(undefined, { executors: executorsOn(restored, workspaces, freshClone), shutdownGraceMs: 50 });

    const flightEnd = await h2.waitFor(flight.sessionId, "the interrupted task's end", finished, 120_000);
    expect(flightEnd.outcome).toBe("approved");
    const flightLog = await restored.store.readStream(flight.sessionId);
    const claims = ofType<{ stepId: string; reclaimed?: boolean }>(flightLog, "StepStarted").filter((d) => d.stepId === heldStep);
    expect(claims.at(-1)).toMatchObject({ reclaimed: true });
    expect(ofType<{ stepId: string }>(flightLog, "StepCompleted").filter((d) => d.stepId === heldStep)).toHaveLength(1);

    // The waiting session is still waiting, and goes on when confirmed.
    expect((await h2.state(waiting.sessionId)).fsm).toBe("awaiting_operator_confirm");
    await confirmTask(deps(restored), { sessionId: waiting.sessionId, via: "api" }, testActor);
    expect((await h2.waitFor(waiting.sessionId, "the confirmed session's end", finished, 120_000)).outcome).toBe("approved");

    // A fork of the finished session at its last scheduled step runs it again in a worktree
    // built on the fresh clone from the restored bundles.
    const doneLog = await restored.store.readStream(done.sessionId);
    const lastScheduled = doneLog.filter((e) => e.type === "StepScheduled").at(-1)!.version;
    const fork = await forkSession(deps(restored), { sessionId: done.sessionId, atVersion: lastScheduled }, testActor);
    const forkEnd = await h2.waitFor(fork.sessionId, "the fork's end", finished, 120_000);
    expect(forkEnd.outcome).toBe("approved");
    const forkDir = path.join(workspaces, fork.sessionId);
    expect(gitIn(forkDir, "rev-parse", "HEAD")).toBe(headCommit);
    expect(fs.readFileSync(path.join(forkDir, "src/sum.js"), "utf8")).toBe(FIXED_SUM);
    expect(gitIn(freshClone, "cat-file", "-t", headCommit)).toBe("commit");
    for (const p of pools.splice(0)) await p.end();
  }, 300_000);

  it("refuses a changed file (naming it), a newer version's backup, and a target that holds data unless --force", async () => {
    // The first test's backup (taken here when this test runs alone).
    if (!fs.existsSync(path.join(backupDir, "manifest.json"))) await takeBackup(source.url, backupDir);
    const manifest = await readBackup(backupDir);

    // One byte of the events' file changed: refused before anything is written, the file named.
    const tampered = path.join(root, "tampered");
    fs.cpSync(backupDir, tampered, { recursive: true });
    const eventsFile = path.join(tampered, "tables/events.copy.gz");
    const bytes = fs.readFileSync(eventsFile);
    bytes[bytes.length - 10] = bytes[bytes.length - 10]! ^ 0xff;
    fs.writeFileSync(eventsFile, bytes);
    const target = await createTestDatabase({ migrated: false });
    const changed = await rejection(restoreBackup(target.url, tampered));
    expect(changed.code).toBe("INVALID_INPUT");
    expect(changed.message).toContain("backup file tables/events.copy.gz does not match the manifest's sha256");
    const untouched = await target.pool.query("SELECT to_regclass('events') AS t");
    expect(untouched.rows[0].t).toBeNull();
    // A file missing is named too.
    fs.rmSync(path.join(tampered, "tables/blobs.copy.gz"));
    fs.cpSync(path.join(backupDir, "tables/events.copy.gz"), eventsFile);
    expect((await rejection(restoreBackup(target.url, tampered))).message).toContain("backup file tables/blobs.copy.gz is missing");

    // A backup from a newer version (a migration this code does not have).
    const newer = path.join(root, "newer");
    fs.cpSync(backupDir, newer, { recursive: true });
    const future = {
      ...manifest,
      appVersion: "9.0.0",
      migrations: [...manifest.migrations, { name: "29990101000000_future", checksum: "0".repeat(64) }],
    };
    fs.writeFileSync(path.join(newer, "manifest.json"), JSON.stringify(future));
    const tooNew = await rejection(restoreBackup(target.url, newer));
    expect(tooNew.code).toBe("PRECONDITION_FAILED");
    expect(tooNew.message).toContain(
      "the backup was made by a newer Cat Cafe (version 9.0.0; its migration 29990101000000_future is unknown",
    );

    // Into a database that holds data: refused without force; with it, replaced by the backup.
    await restoreBackup(target.url, backupDir);
    await target.pool.query("INSERT INTO blobs (hash, size, media_type, content) VALUES ($1, 1, 'text/plain', 'x')", ["f".repeat(64)]);
    const notEmpty = await rejection(restoreBackup(target.url, backupDir));
    expect(notEmpty.code).toBe("PRECONDITION_FAILED");
    expect(notEmpty.message).toMatch(/^the target database is not empty \(rows in .*blobs.*\): .* pass --force/);
    await restoreBackup(target.url, backupDir, { force: true });
    const blobs = await target.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM blobs");
    expect(blobs.rows[0]!.n).toBe(manifest.tables.find((t) => t.name === "blobs")!.rows);
    expect(await streamHashes(target.pool)).toEqual(manifest.events.streams);
  }, 120_000);

  it("npm run backup / npm run restore: DATABASE_URL into a new embedded data directory, its transaction ids advanced past the restored events'; a second restore is refused, exit 1", async () => {
    // Events of this file's own (it may run alone), appended past the transaction ids a new cluster starts with.
    await source.pool.query("DO $$ BEGIN FOR i IN 1..3000 LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$");
    await h.project("bk-script", agents);
    await startTask(deps(source), { projectId: "bk-script", prompt: "Fix sum() (by script)", mode: "proposal" }, testActor);
    const dir = path.join(root, "by-script");
    const dataDir = path.join(root, "restored-data");
    const port = await freePort();
    const script = (name: string, args: string[], env: Record<string, string>) =>
      execFileSync(process.execPath, ["--import", "tsx", `scripts/${name}.ts`, ...args], {
        env: { ...process.env, DATABASE_URL: "", ...env },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    const backedUp = JSON.parse(script("backup", [dir], { DATABASE_URL: source.url })) as { events: number };
    expect(backedUp.events).toBe((await eventRows(source)).length);
    const embedded = { CATCAFE_DATA_DIR: dataDir, CATCAFE_PG_PORT: String(port) };
    const restoredOut = JSON.parse(script("restore", [dir], embedded)) as { events: number; changedProjections: string[] };
    expect(restoredOut).toMatchObject({ events: backedUp.events, changedProjections: [] });
    let second: { status: number | null; stderr: string } | null = null;
    try {
      script("restore", [dir], embedded);
    } catch (err) {
      second = err as { status: number | null; stderr: string };
    }
    expect(second?.status).toBe(1);
    expect(second?.stderr).toContain("[restore] failed: the target database is not empty");

    const secrets = JSON.parse(fs.readFileSync(path.join(dataDir, "secrets.json"), "utf8")) as { postgresPassword: string };
    const server = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "pg"), port, password: secrets.postgresPassword });
    const pool = createPool(server.urlFor(EMBEDDED_DATABASE), 2);
    try {
      const rows = await pool.query<{ row: string }>(
        "SELECT concat_ws('|', position, tx_id, event_id, stream_id, version, type, summary, data::text, metadata::text, recorded_at) AS row FROM events ORDER BY position",
      );
      expect(rows.rows.map((r) => r.row)).toEqual(await eventRows(source));
      // A new cluster counts transactions from a few hundred: the restore moved it past the events' tx_id.
      const xid = await pool.query<{ ahead: boolean }>("SELECT (pg_current_xact_id()::text)::bigint > max(tx_id) AS ahead FROM events");
      expect(xid.rows[0]!.ahead).toBe(true);
    } finally {
      await pool.end();
      await server.stop();
    }
  }, 180_000);

  it("a backup from an older version (one migration behind) is restored at its level, then migrated up to this version", async () => {
    const all = listMigrations();
    const older = await createTestDatabase({ migrated: false });
    await migrate(older.url, () => {}, { upTo: all.at(-2)!.name });
    await older.pool.query("INSERT INTO blobs (hash, size, media_type, content) VALUES ($1, 3, 'text/plain', 'old')", ["e".repeat(64)]);
    const dir = path.join(root, "older");
    const { manifest } = await takeBackup(older.url, dir);
    expect(manifest.migrations.map((m) => m.name)).toEqual(all.slice(0, -1).map((m) => m.name));

    const target = await createTestDatabase({ migrated: false });
    const result = await restoreBackup(target.url, dir);
    expect(result.migratedUp).toEqual([all.at(-1)!.name]);
    const applied = await target.pool.query<{ name: string }>(
      "SELECT migration_name AS name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name",
    );
    expect(applied.rows.map((r) => r.name)).toEqual(all.map((m) => m.name));
    const blob = await target.pool.query<{ content: Buffer }>("SELECT content FROM blobs WHERE hash = $1", ["e".repeat(64)]);
    expect(blob.rows[0]!.content.toString()).toBe("old");
  });
});
