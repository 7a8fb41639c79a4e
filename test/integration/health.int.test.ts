// getHealth against a real database: live-runner counting by the database clock, each live
// runner's sandbox state as its process registered it (also in runners.list), and a dead
// database answering "down" quickly instead of hanging.
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createPool } from "../../server/db/pool";
import { getHealth } from "../../server/health";
import { claimNextStep, recordStepOutcome, scheduleStep } from "../../server/runner/dispatch";
import { countLiveRunners, isRunnerRegistered, listRunners, releaseOrphanedLease, RUNNER_LIVENESS_MS } from "../../server/runner/liveness";
import { APP_VERSION } from "../../server/version";
import { createApiFixture } from "../helpers/api";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { spawnRunnerProcess } from "../helpers/runner-process";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
beforeEach(async () => {
  await db.pool.query("DELETE FROM runners");
});

async function insertRunner(fields: { heartbeatAgoMs?: number; stopped?: boolean } = {}): Promise<string> {
  const id = uniqueId("runner");
  await db.pool.query(
    `INSERT INTO runners (id, host, pid, version, heartbeat_at, stopped_at)
     VALUES ($1, 'test-host', 4242, '0.0.0', now() - make_interval(secs => $2::double precision / 1000), CASE WHEN $3 THEN now() END)`,
    [id, fields.heartbeatAgoMs ?? 0, fields.stopped ?? false],
  );
  return id;
}

describe("getHealth with a reachable database", () => {
  it("reports ok with no runners", async () => {
    expect(await getHealth(db.pool)).toEqual({ ok: true, db: "ok", runners: 0, liveRunners: [], version: APP_VERSION });
  });

  it("counts a runner with a fresh heartbeat", async () => {
    const id = await insertRunner();
    // Registered without a sandbox state (as a runner older than that record): not reported.
    expect(await getHealth(db.pool)).toEqual({
      ok: true,
      db: "ok",
      runners: 1,
      liveRunners: [{ id, sandbox: null }],
      version: APP_VERSION,
    });
  });

  it("does not count a runner whose heartbeat is older than the liveness window", async () => {
    await insertRunner({ heartbeatAgoMs: RUNNER_LIVENESS_MS + 1_000 });
    await insertRunner({ heartbeatAgoMs: RUNNER_LIVENESS_MS - 5_000 });
    expect((await getHealth(db.pool)).runners).toBe(1);
  });

  it("does not count a stopped runner, even with a fresh heartbeat", async () => {
    await insertRunner({ stopped: true });
    await insertRunner();
    await insertRunner();
    expect((await getHealth(db.pool)).runners).toBe(2);
  });
});

describe("one liveness rule (server/runner/liveness.ts) for health, the header, the dashboard and runners.list", () => {
  it("counts, lists live-only and marks live the same runners, judged by the database clock", async () => {
    const fresh = await insertRunner();
    const lagging = await insertRunner({ heartbeatAgoMs: RUNNER_LIVENESS_MS - 5_000 });
    const stale = await insertRunner({ heartbeatAgoMs: RUNNER_LIVENESS_MS + 1_000 });
    await insertRunner({ stopped: true });
    const dayOld = await insertRunner({ heartbeatAgoMs: 25 * 60 * 60 * 1000 });

    const all = await listRunners(db.pool);
    const live = await listRunners(db.pool, { liveOnly: true });
    expect(all.runners.map((r) => [r.id, r.live]).sort()).toEqual(
      [
        [fresh, true],
        [lagging, true],
        [stale, false],
      ].sort(),
    );
    expect(all.runners.map((r) => r.id)).not.toContain(dayOld);
    expect(live.runners.map((r) => r.id).sort()).toEqual([fresh, lagging].sort());
    expect(await countLiveRunners(db.pool)).toBe(2);
    expect((await getHealth(db.pool)).runners).toBe(2);
    // The clock is the database's: the freshest heartbeat is at most a moment behind it.
    const newest = Math.max(...live.runners.map((r) => r.heartbeatAt.getTime()));
    expect(live.now.getTime() - newest).toBeGreaterThanOrEqual(0);
    expect(live.now.getTime() - newest).toBeLessThan(RUNNER_LIVENESS_MS);
  });

  it("with no runner at all, still answers with the database clock", async () => {
    const before = Date.now();
    const { now, runners } = await listRunners(db.pool, { liveOnly: true });
    expect(runners).toEqual([]);
    expect(Math.abs(now.getTime() - before)).toBeLessThan(60_000);
  });
});

describe("each live runner's sandbox state, as its process found it at registration", () => {
  it("a runner started with CATCAFE_SANDBOX=off is off with the reason, one started without it on (bubblewrap works here): in health and runners.list", async () => {
    const api = createApiFixture(db);
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-health-sandbox-"));
    const off = uniqueId("unsandboxed");
    const on = uniqueId("sandboxed");
    const children: ChildProcess[] = [
      spawnRunnerProcess({ databaseUrl: db.url, id: off, stateDir, env: { CATCAFE_SANDBOX: "off" } }),
      spawnRunnerProcess({ databaseUrl: db.url, id: on, stateDir }),
    ];
    try {
      const expected = [
        { id: off, sandbox: { on: false, reason: "turned off (CATCAFE_SANDBOX=off)" } },
        { id: on, sandbox: { on: true, reason: null } },
      ].sort((a, b) => a.id.localeCompare(b.id));
      await vi.waitFor(
        async () => {
          const health = await getHealth(db.pool);
          expect(health.ok && [...health.liveRunners].sort((a, b) => a.id.localeCompare(b.id))).toEqual(expected);
        },
        { timeout: 30_000, interval: 200 },
      );
      // The same state for every role (a viewer sees host pseudonyms, not less of the sandbox).
      for (const role of ["viewer", "operator"] as const) {
        const listed = await api.caller(await api.user(role)).runners.list();
        const live = await api.caller(await api.user(role)).runners.live();
        for (const runners of [listed, live.runners]) {
          const states = runners.map((r) => ({ id: r.id, sandbox: r.sandbox })).sort((a, b) => a.id.localeCompare(b.id));
          expect(states, role).toEqual(expected);
        }
      }
    } finally {
      for (const child of children) child.kill("SIGTERM");
      await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(null) : c.once("exit", resolve)))));
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
    // Stopped runners are no longer live: nothing of theirs is reported.
    expect(await getHealth(db.pool)).toMatchObject({ runners: 0, liveRunners: [] });
  }, 60_000);
});

describe("a runner's registration and a step's orphaned lease", () => {
  it("lists the agent CLIs a runner detected, and null before it did", async () => {
    const probed = await insertRunner();
    const shells = [{ shell: "codex", path: "/usr/bin/codex", version: "0.50.0", supported: true, capabilities: {}, problems: [] }];
    await db.pool.query("UPDATE runners SET shells = $2, shells_detected_at = now() WHERE id = $1", [probed, JSON.stringify(shells)]);
    const unprobed = await insertRunner();
    const { runners } = await listRunners(db.pool);
    expect(runners.find((r) => r.id === probed)).toMatchObject({ shells, shellsDetectedAt: expect.any(Date) });
    expect(runners.find((r) => r.id === unprobed)).toMatchObject({ shells: null, shellsDetectedAt: null });
  });

  it("a runner process is registered by host and pid until it stops", async () => {
    expect(await isRunnerRegistered(db.pool, "test-host", 4242)).toBe(false);
    const id = await insertRunner();
    expect(await isRunnerRegistered(db.pool, "test-host", 4242)).toBe(true);
    expect(await isRunnerRegistered(db.pool, "other-host", 4242)).toBe(false);
    expect(await isRunnerRegistered(db.pool, "test-host", 4243)).toBe(false);
    await db.pool.query("UPDATE runners SET stopped_at = now() WHERE id = $1", [id]);
    expect(await isRunnerRegistered(db.pool, "test-host", 4242)).toBe(false);
  });

  it("a step's lease is handed over at once when its runner is not live, kept while it is, and a queued or finished step says so", async () => {
    const sessionId = uniqueId();
    await db.store.append(sessionId, "no_stream", [{ type: "SessionCreated", data: { title: "lease", workflow: "test", state: "open" } }], {
      actor: testActor,
    });
    const queued = await scheduleStep(db.store, { sessionId, kind: "held", input: {} }, { actor: testActor });
    const live = await insertRunner();
    expect(await releaseOrphanedLease(db.pool, queued)).toEqual({ state: "queued", attempt: 0, liveRunners: 1 });

    await claimNextStep(db.store, { runnerId: live, leaseMs: 60_000, reclaimBackoffMs: 0 });
    expect(await releaseOrphanedLease(db.pool, queued)).toEqual({ state: "running", attempt: 1, liveRunners: 1 });

    await db.pool.query("UPDATE runners SET heartbeat_at = now() - interval '1 hour' WHERE id = $1", [live]);
    expect(await releaseOrphanedLease(db.pool, queued)).toEqual({ state: "released", attempt: 1, liveRunners: 0 });
    const lease = await db.pool.query<{ expired: boolean }>("SELECT lease_expires_at <= now() AS expired FROM steps WHERE id = $1", [
      queued,
    ]);
    expect(lease.rows[0]!.expired).toBe(true);

    await recordStepOutcome(
      db.store,
      { id: queued, attempt: 1, sessionId },
      { kind: "completed", output: {} },
      { kind: "runner", id: live },
    );
    expect(await releaseOrphanedLease(db.pool, queued)).toEqual({ state: "done", attempt: 1, liveRunners: 0 });
    expect(await releaseOrphanedLease(db.pool, "0193a000-0000-7000-8000-00000000dead")).toEqual({
      state: "done",
      attempt: 0,
      liveRunners: 0,
    });
  });
});

describe("getHealth with an unreachable database", () => {
  it("reports down when nothing listens on the port", async () => {
    const dead = createPool("postgresql://catcafe:x@127.0.0.1:1/catcafe", 1);
    try {
      const started = Date.now();
      const health = await getHealth(dead);
      expect(health).toMatchObject({ ok: false, db: "down", runners: 0, version: APP_VERSION });
      expect(health.ok === false && health.error).toMatch(/ECONNREFUSED/);
      expect(Date.now() - started).toBeLessThan(2_500);
    } finally {
      await dead.end();
    }
  });

  describe("a server that accepts connections and never answers", () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    let port = 0;
    beforeAll(async () => {
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      port = (silent.address() as net.AddressInfo).port;
    });
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });

    it("reports down after the timeout instead of hanging", async () => {
      const hung = createPool(`postgresql://catcafe:x@127.0.0.1:${port}/catcafe`, 1);
      try {
        const started = Date.now();
        const health = await getHealth(hung, { timeoutMs: 300 });
        expect(health).toMatchObject({ ok: false, db: "down", runners: 0 });
        expect(health.ok === false && health.error).toMatch(/did not answer within 300 ms/);
        expect(Date.now() - started).toBeLessThan(1_500);
      } finally {
        for (const s of sockets) s.destroy();
        await hung.end().catch(() => {});
      }
    });
  });
});
