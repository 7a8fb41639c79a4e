// Facts about the run that make figures comparable: versions, machine, durability settings.
import { execFileSync } from "node:child_process";
import os from "node:os";
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

export async function collectMetadata(db: Queryable): Promise<Record<string, unknown>> {
  return {
    timestamp: new Date().toISOString(),
    git_commit: gitCommit(),
    node_version: process.version,
    postgres_version: await show(db, "server_version"),
    cpu_count: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? null,
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
