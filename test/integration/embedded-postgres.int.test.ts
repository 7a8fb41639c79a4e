import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres, type RunningPostgres } from "../../server/db/embedded";
import { freePort } from "../helpers/ports";

const dirs: string[] = [];
const servers: RunningPostgres[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => {});
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-embedded-"));
  fs.chmodSync(dir, 0o755);
  dirs.push(dir);
  return path.join(dir, "pg");
}

async function select1(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const r = await client.query("SELECT 1 AS one");
  await client.end();
  return r.rows[0].one;
}

describe("embedded postgres", () => {
  it("recovers when a killed previous run left its server running on the data directory", async () => {
    const dataDir = tempDir();
    const port = await freePort();
    // A separate process starts postgres and is then killed with SIGKILL: postgres stays behind.
    const script = `import { startEmbeddedPostgres } from ${JSON.stringify(path.resolve("server/db/embedded.ts"))};
      await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port}, password: "pw" });
      console.log("ready"); setInterval(() => {}, 1e9);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (d) => String(d).includes("ready") && resolve());
      child.once("exit", (code) => reject(new Error(`child exited early (${code})`)));
    });
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    const orphanPid = Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    expect(() => process.kill(orphanPid, 0)).not.toThrow(); // the orphan is really there

    const logs: string[] = [];
    const server = await startEmbeddedPostgres({ dataDir, port, password: "pw", log: (l) => logs.push(l) });
    servers.push(server);
    expect(logs.join("\n")).toMatch(new RegExp(`left running by an earlier run \\(pid ${orphanPid}\\)`));
    expect(await select1(server.urlFor("postgres"))).toBe(1);
    expect(() => process.kill(orphanPid, 0)).toThrow();
  });

  it("removes a stale postmaster.pid whose process is gone", async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const first = await startEmbeddedPostgres({ dataDir, port, password: "pw" });
    await first.stop();
    const pidFile = path.join(dataDir, "postmaster.pid");
    fs.writeFileSync(pidFile, `999999\n${dataDir}\n0\n${port}\n`);
    const logs: string[] = [];
    const server = await startEmbeddedPostgres({ dataDir, port, password: "pw", log: (l) => logs.push(l) });
    servers.push(server);
    expect(logs.join("\n")).toMatch(/removing stale .*postmaster.pid \(pid 999999 is not a running postgres\)/);
    expect(await select1(server.urlFor("postgres"))).toBe(1);
  });

  it("does not change the exit code of a process that used it (a failing run must not exit 0)", async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const script = `import { startEmbeddedPostgres } from ${JSON.stringify(path.resolve("server/db/embedded.ts"))};
      const server = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port}, password: "pw" });
      await server.stop();
      process.exitCode = 3;`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: "ignore" });
    const code = await new Promise((r) => child.once("exit", r));
    expect(code).toBe(3);
  });

  it("reports the real reason when postgres cannot start", async () => {
    const blocker = net.createServer();
    const port = await freePort();
    await new Promise<void>((r) => blocker.listen(port, "127.0.0.1", () => r()));
    try {
      await expect(startEmbeddedPostgres({ dataDir: tempDir(), port, password: "pw" })).rejects.toThrow(
        new RegExp(`failed to start on port ${port}[\\s\\S]*(could not bind|Address already in use)`),
      );
    } finally {
      blocker.close();
    }
  });
});
