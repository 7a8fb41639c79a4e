// The scripts in docs/examples/ run as a user would run them (`node --import tsx ...` with
// CATCAFE_URL and CATCAFE_TOKEN) against a live `npm start`: start-and-watch takes a demo
// task through its roundtable, a confirm and the build to approved; list-and-export lists
// the approved sessions and writes the newest one's export.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenWithPassword } from "../../lib/client";
import { cleanEnv, LIVE_SERVER_TIMEOUT_MS, ROOT, run, startLiveServer, type LiveServer, type RunResult } from "../helpers/live-server";

let server: LiveServer;
let tmp: string;
let token: string;

function example(name: string, args: string[]): Promise<RunResult> {
  const env = cleanEnv({ CATCAFE_URL: server.url, CATCAFE_TOKEN: token, HOME: tmp });
  return run(process.execPath, ["--import", "tsx", path.join(ROOT, "docs", "examples", name), ...args], {
    env,
    cwd: ROOT,
    timeoutMs: 120_000,
  });
}

const show = (r: RunResult) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-examples-e2e-"));
  server = await startLiveServer("examples-e2e");
  ({ token } = await createTokenWithPassword({
    url: server.url,
    email: server.admin.email,
    password: server.admin.password,
    name: "examples e2e",
  }));
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("docs/examples", () => {
  let sessionId = "";

  it("start-and-watch.ts starts a task, confirms it when the roundtable is done, and follows it to approved", async () => {
    const r = await example("start-and-watch.ts", ["demo"]);
    expect(r.code, show(r)).toBe(0);
    sessionId = /^started (s-[0-9a-f]+)$/m.exec(r.stdout)?.[1] ?? "";
    expect(sessionId, show(r)).not.toBe("");
    expect(r.stdout).toContain("waiting in awaiting_operator_confirm: confirming");
    expect(r.stdout).toMatch(/OperatorConfirmed/);
    expect(r.stdout.trim().split("\n").at(-1)).toBe("finished: approved");
  }, 120_000);

  it("list-and-export.ts lists approved sessions and exports the newest in the export layout", async () => {
    expect(sessionId).not.toBe("");
    const out = path.join(tmp, "export");
    const r = await example("list-and-export.ts", [out]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain(`${sessionId}  approved`);
    expect(r.stdout).toMatch(new RegExp(`exported ${sessionId} \\(approved\\): \\d+ files`));
    for (const name of ["summary.json", "task-events.jsonl", "task-timeline.json", "rounds/01/meta.json"])
      expect(fs.existsSync(path.join(out, name)), name).toBe(true);
  });

  it("a failure is reported with its code and a non-zero exit", async () => {
    const r = await run(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "docs", "examples", "start-and-watch.ts"), "no-such-project"],
      {
        env: cleanEnv({ CATCAFE_URL: server.url, CATCAFE_TOKEN: token, HOME: tmp }),
        cwd: ROOT,
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('failed: NOT_FOUND: no project "no-such-project"');
  });
});
