// getHealth against a real database: live-runner counting by the database clock, and a
// dead database answering "down" quickly instead of hanging.
import net from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createPool } from "../../server/db/pool";
import { getHealth } from "../../server/health";
import { countLiveRunners, listRunners, RUNNER_LIVENESS_MS } from "../../server/runner/liveness";
import { APP_VERSION } from "../../server/version";
import { createTestDatabase, uniqueId, type TestDatabase } from "../helpers/db";

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
    expect(await getHealth(db.pool)).toEqual({ ok: true, db: "ok", runners: 0, version: APP_VERSION });
  });

  it("counts a runner with a fresh heartbeat", async () => {
    await insertRunner();
    expect(await getHealth(db.pool)).toEqual({ ok: true, db: "ok", runners: 1, version: APP_VERSION });
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
