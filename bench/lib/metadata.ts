// Facts about the run that make figures comparable: versions, machine, durability settings.
import { execFileSync } from "node:child_process";
import os from "node:os";
import { performance } from "node:perf_hooks";
import type { Queryable } from "../../server/db/pool";

function gitCommit(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() || null;
  } catch {
    return null;
  }
}

async function show(db: Queryable, setting: string): Promise<string | null> {
  try {
    const r = await db.query<Record<string, string>>(`SHOW ${setting}`);
    return r.rows[0]?.[setting] ?? null;
  } catch {
    return null;
  }
}

/**
 * The machine's single-core speed as one fixed piece of JavaScript (a loop and a JSON round
 * trip) takes, best of six: the same commit's browser and runner figures scale with it, so
 * two reports' figures compare only beside this one (docs/scaling.md).
 */
export function cpuCalibrationMs(): number {
  const doc = { entries: Array.from({ length: 2_000 }, (_, i) => ({ version: i, type: "AgentOutput", text: "x".repeat(100) })) };
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 6; round++) {
    const t0 = performance.now();
    let sum = 0;
    for (let i = 0; i < 20_000_000; i++) sum += i % 7;
    for (let i = 0; i < 20; i++) sum += (JSON.parse(JSON.stringify(doc)) as typeof doc).entries.length;
    if (sum < 0) throw new Error("unreachable");
    best = Math.min(best, performance.now() - t0);
  }
  return Math.round(best * 10) / 10;
}

export async function collectMetadata(db: Queryable): Promise<Record<string, unknown>> {
  return {
    timestamp: new Date().toISOString(),
    git_commit: gitCommit(),
    node_version: process.version,
    postgres_version: await show(db, "server_version"),
    cpu_count: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? null,
    cpu_calibration_ms: cpuCalibrationMs(),
    platform: `${os.platform()} ${os.release()}`,
    postgres_settings: {
      fsync: await show(db, "fsync"),
      synchronous_commit: await show(db, "synchronous_commit"),
      full_page_writes: await show(db, "full_page_writes"),
      wal_sync_method: await show(db, "wal_sync_method"),
      shared_buffers: await show(db, "shared_buffers"),
    },
  };
}
