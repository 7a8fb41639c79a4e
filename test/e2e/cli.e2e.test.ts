// The `catcafe` command line end to end: the real bin/catcafe.mjs as a child process, with a
// HOME and XDG_CONFIG_HOME of its own, against a live `npm start` (embedded PostgreSQL, web
// server, runner, demo project). Login with email + password (token saved 0600), a demo task
// started, confirmed and watched to approved (exit 0), a failing session makes watch exit
// non-zero, `sessions prune` cleans up an unsuccessful session's worktree, export writes the
// export layout's files, a viewer's confirm is FORBIDDEN, a revoked
// token is refused, and --json output parses. The MCP tools, over stdio (`catcafe mcp`) and
// over HTTP (`/api/mcp`), with the official SDK's client.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCatCafeClient } from "../../lib/client";
import { cleanEnv, LIVE_SERVER_TIMEOUT_MS, ROOT, run, startLiveServer, type LiveServer, type RunResult } from "../helpers/live-server";
import { ZSessionStateDocument, type SessionStateDocument } from "../../server/sessions/state-document";
import { gitIn } from "../helpers/tasks";
import { BRAIN_COST, BRAIN_MODEL, CLI_COST, CLI_MODEL, startUsageBrain, USAGE_PRICING, usageProject } from "../helpers/usage";

const BIN = path.join(ROOT, "bin", "catcafe.mjs");
const CLI_TIMEOUT_MS = 90_000;

let server: LiveServer;
let tmp: string;
/** The admin's HOME, signed in by the login test. */
let adminHome: string;

function homeDir(name: string): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Runs `catcafe args...` as a user whose HOME is `home`. */
function catcafe(args: string[], options: { home?: string; input?: string; env?: Record<string, string> } = {}): Promise<RunResult> {
  const home = options.home ?? adminHome;
  const env = cleanEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), ...options.env });
  for (const name of ["CATCAFE_URL", "CATCAFE_TOKEN", "CATCAFE_PROJECT", "CATCAFE_CONFIG", "CATCAFE_PASSWORD"])
    if (!options.env?.[name]) delete env[name];
  return run(BIN, args, { env, cwd: tmp, input: options.input, timeoutMs: CLI_TIMEOUT_MS });
}

function show(r: RunResult): string {
  return `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
}

/** stdout as one JSON document; the failure message shows the whole run. */
function json<T>(r: RunResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON:\n${show(r)}`);
  }
}

/** The API token `catcafe login` saved in `home`. */
function savedToken(home: string): string {
  return (JSON.parse(fs.readFileSync(path.join(home, ".config", "catcafe", "config.json"), "utf8")) as { token: string }).token;
}

/** stdout as JSON lines (watch --json). */
function jsonLines(r: RunResult): Array<Record<string, unknown>> {
  return r.stdout
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function login(home: string, email: string, password: string): Promise<RunResult> {
  return catcafe(["login", "--url", server.url, "--email", email, "--password-stdin"], { home, input: `${password}\n` });
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-cli-e2e-"));
  adminHome = homeDir("admin");
  server = await startLiveServer("cli-e2e");
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("catcafe --help", () => {
  it("lists every command; each command's help has examples; a bad option is a usage error (exit 2)", async () => {
    const help = await catcafe(["--help"]);
    expect(help.code, show(help)).toBe(0);
    for (const command of [
      "login",
      "task",
      "sessions",
      "session",
      "watch",
      "export",
      "go",
      "config",
      "shells",
      "brains",
      "runners",
      "token",
      "users",
      "projections",
      "projects",
      "inbox",
      "forge",
      "chat",
      "deliver",
      "bake-off",
      "mcp",
      "usage",
      "intake",
      "agents",
    ]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
    }
    for (const args of [
      ["task", "start"],
      ["watch"],
      ["export"],
      ["go"],
      ["token", "create"],
      ["users", "invite"],
      ["users", "role"],
      ["projections", "rebuild"],
      ["config", "validate"],
      ["config", "show"],
      ["projects", "add"],
      ["projects", "agents"],
      ["projects", "agent"],
      ["projects", "delivery"],
      ["inbox"],
      ["forge", "new"],
      ["chat", "start"],
      ["chat", "say"],
      ["deliver"],
      ["bake-off", "pick"],
      ["mcp"],
      ["usage"],
      ["intake", "show"],
      ["intake", "rules"],
      ["intake", "secret"],
      ["intake", "inbox"],
      ["agents", "stats"],
    ]) {
      const sub = await catcafe([...args, "--help"]);
      expect(sub.code, show(sub)).toBe(0);
      expect(sub.stdout, args.join(" ")).toContain("Examples:");
      expect(sub.stdout).toContain("--json");
    }
    const bad = await catcafe(["task", "start", "--no-such-option"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option");
  });

  it("without a login, a command says how to sign in and exits 1", async () => {
    const r = await catcafe(["sessions", "list"], { home: homeDir("nobody") });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not signed in");
    expect(r.stderr).toContain("catcafe login");
  });
});

describe("catcafe against a live server", () => {
  let approvedId = "";

  it("login signs in with email + password and stores the URL and a new token, readable only by the user", async () => {
    const r = await login(adminHome, server.admin.email, server.admin.password);
    expect(r.code, show(r)).toBe(0);
    const file = path.join(adminHome, ".config", "catcafe", "config.json");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const saved = JSON.parse(fs.readFileSync(file, "utf8")) as { url: string; token: string; user: { email: string; role: string } };
    expect(saved).toMatchObject({ url: server.url, user: { email: server.admin.email, role: "admin" } });
    expect(saved.token).toMatch(/^cc_/);
    // The token is never printed by login.
    expect(r.stdout + r.stderr).not.toContain(saved.token);

    const me = await catcafe(["whoami", "--json"]);
    expect(json<{ user: { email: string; role: string; via: string } }>(me).user).toMatchObject({
      email: server.admin.email,
      role: "admin",
      via: "token",
    });

    const wrong = await login(homeDir("wrong"), server.admin.email, "not the password");
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("wrong email or password");
  });

  it("session state prints the state document as JSON (with or without --json), the object GET /api/sessions/:id/state returns", async () => {
    const home = homeDir("state-reader");
    const signedIn = await login(home, server.admin.email, server.admin.password);
    expect(signedIn.code, show(signedIn)).toBe(0);
    const { token } = JSON.parse(fs.readFileSync(path.join(home, ".config", "catcafe", "config.json"), "utf8")) as { token: string };
    // The demo's proposal task: its roundtable runs, then it waits for a person's confirm.
    const sessionId = server.demoSessionId;
    const read = async () => {
      const r = await catcafe(["session", "state", sessionId], { home });
      expect(r.code, show(r)).toBe(0);
      return json<SessionStateDocument>(r);
    };
    let document = await read();
    for (let i = 0; i < 100 && document.state !== "awaiting_operator_confirm"; i++) {
      await new Promise((r) => setTimeout(r, 200));
      document = await read();
    }
    expect(ZSessionStateDocument.parse(document)).toEqual(document);
    expect(document).toMatchObject({
      format: { name: "catcafe-session-state", version: 1 },
      sessionId,
      workflow: { id: "review_loop" },
      mode: "proposal",
      status: "active",
      state: "awaiting_operator_confirm",
      iteration: 1,
      stage: null,
      roles: {
        coder: { agentId: "coder-sim", kind: "scripted" },
        reviewer: { agentId: "reviewer-sim" },
        tester: { agentId: "tester-sim" },
      },
      step: null,
      outcome: null,
      fork: null,
      budget: { iterations: { used: 1 } },
    });
    expect(json<SessionStateDocument>(await catcafe(["session", "state", sessionId, "--json"], { home }))).toEqual(document);
    const rest = await fetch(`${server.url}/api/sessions/${sessionId}/state`, { headers: { Authorization: `Bearer ${token}` } });
    expect(rest.status).toBe(200);
    expect(await rest.json()).toEqual(document);

    const missing = await catcafe(["session", "state", "s-000000000000"], { home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("s-000000000000");
  });

  it("task start, watch --stop-at-confirm, task confirm, then watch follows it to approved and exits 0", async () => {
    const started = await catcafe(["task", "start", "--project", "demo", "--json", "Fix slugify() so the tests pass"]);
    expect(started.code, show(started)).toBe(0);
    const { sessionId, mode, workflow } = json<{ sessionId: string; mode: string; workflow: string }>(started);
    expect(sessionId).toMatch(/^s-[0-9a-f]+$/);
    expect({ mode, workflow }).toEqual({ mode: "proposal", workflow: "review_loop" });

    const roundtable = await catcafe(["watch", sessionId, "--stop-at-confirm", "--json"]);
    expect(roundtable.code, show(roundtable)).toBe(0);
    const lines = jsonLines(roundtable);
    expect(lines.at(-1)).toMatchObject({ type: "waiting", status: { state: "awaiting_operator_confirm" } });
    expect(lines.filter((l) => l.type === "event").map((l) => (l.entry as { type: string }).type)).toContain("AgentOutputRecorded");

    const confirmed = await catcafe(["task", "confirm", sessionId, "--json"]);
    expect(confirmed.code, show(confirmed)).toBe(0);
    expect(json<{ sessionId: string; version: number }>(confirmed)).toMatchObject({ sessionId, version: expect.any(Number) });

    const watched = await catcafe(["watch", sessionId]);
    expect(watched.code, show(watched)).toBe(0);
    expect(watched.stdout).toMatch(/OperatorConfirmed/);
    expect(watched.stdout).toMatch(/TestCommandRecorded .*PASS node --test test\//);
    expect(watched.stdout).toContain(`${sessionId} finished: approved`);
    approvedId = sessionId;

    // A second confirm is refused with the reason, not a crash.
    const again = await catcafe(["task", "confirm", sessionId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^catcafe: (PRECONDITION_FAILED|CONFLICT): /);
  }, 120_000);

  it("a session that ends without success makes watch exit non-zero (3), with the outcome in its last JSON line", async () => {
    // A proposal cancelled while its roundtable runs ends `cancelled`: not a success.
    const started = await catcafe(["task", "start", "-p", "demo", "-m", "proposal", "--json", "Fix slugify() at once"]);
    const { sessionId } = json<{ sessionId: string }>(started);
    const cancelled = await catcafe(["task", "cancel", sessionId]);
    expect(cancelled.code, show(cancelled)).toBe(0);
    const watched = await catcafe(["watch", sessionId, "--json"]);
    expect(watched.code, show(watched)).toBe(3);
    expect(jsonLines(watched).at(-1)).toMatchObject({ type: "finished", success: false, outcome: "cancelled" });

    const human = await catcafe(["watch", sessionId]);
    expect(human.code).toBe(3);
    expect(human.stdout).toContain("finished without success: cancelled");

    const missing = await catcafe(["watch", "s-000000000000"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("NOT_FOUND");
  }, 120_000);

  it("sessions prune: --dry-run lists an unsuccessful session and changes nothing; then a runner removes its worktree and the session shows who cleaned it up; again, nothing more; bad asks are refused", async () => {
    // Cancelled once its roundtable ran (in its worktree): an unsuccessful session with a workspace.
    const started = await catcafe(["task", "start", "-p", "demo", "-m", "proposal", "--json", "Fix slugify(), then stop"]);
    const cancelledId = json<{ sessionId: string }>(started).sessionId;
    const waited = await catcafe(["watch", cancelledId, "--stop-at-confirm"]);
    expect(waited.code, show(waited)).toBe(0);
    expect((await catcafe(["task", "cancel", cancelledId])).code).toBe(0);
    expect((await catcafe(["watch", cancelledId])).code).toBe(3);
    const worktree = path.join(server.dataDir, "workspaces", cancelledId);
    expect(fs.existsSync(worktree)).toBe(true);
    const args = ["sessions", "prune", "--outcome", "cancelled", "--older-than", "0"];
    const dry = await catcafe([...args, "--dry-run", "--json"]);
    expect(dry.code, show(dry)).toBe(0);
    const listed = json<{ dryRun: boolean; sessions: Array<{ sessionId: string; stepId: string | null }> }>(dry);
    expect(listed.dryRun).toBe(true);
    expect(listed.sessions.map((s) => s.sessionId)).toContain(cancelledId);
    expect(fs.existsSync(worktree)).toBe(true);

    const pruned = await catcafe(args);
    expect(pruned.code, show(pruned)).toBe(0);
    expect(pruned.stdout).toMatch(/^Cleaning up \d+ workspace\(s\) of cancelled sessions that ended more than 0 days ago/);
    expect(pruned.stdout).toContain(cancelledId);
    const client = createCatCafeClient({ url: server.url, token: savedToken(adminHome) });
    for (const deadline = Date.now() + 30_000; ;) {
      const status = await client.sessions.cleanUpStatus.query({ sessionId: cancelledId });
      if (status.status === "pruned") {
        expect(status).toMatchObject({ askedBy: expect.stringMatching(/^user:/), askedByName: expect.any(String) });
        break;
      }
      expect(status.status).not.toBe("failed");
      if (Date.now() > deadline) throw new Error(`not cleaned up: ${JSON.stringify(status)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(fs.existsSync(worktree)).toBe(false);
    const timeline = await catcafe(["session", "show", cancelledId, "--events", "5"]);
    expect(timeline.stdout).toContain("Workspace cleaned up: worktree removed");

    const again = await catcafe(args);
    expect(again.code, show(again)).toBe(0);
    expect(again.stdout).not.toContain(cancelledId);

    const which = await catcafe(["sessions", "prune", "--older-than", "30"]);
    expect(which.code).toBe(1);
    expect(which.stderr).toContain("say which sessions: --failed, or --outcome <list>");
    const approved = await catcafe(["sessions", "prune", "--outcome", "approved", "--older-than", "1"]);
    expect(approved.code).toBe(1);
    expect(approved.stderr).toContain("is never cleaned up: its work may still be delivered");
  }, 120_000);

  it("export writes the export layout (req E8) into a new directory, and refuses a non-empty one", async () => {
    expect(approvedId).not.toBe("");
    const out = path.join(tmp, "export");
    const r = await catcafe(["export", approvedId, "--out", out, "--json"]);
    expect(r.code, show(r)).toBe(0);
    const { files } = json<{ files: string[] }>(r);
    expect(files).toEqual(
      expect.arrayContaining([
        "summary.json",
        "task-events.jsonl",
        "task-timeline.json",
        "rounds/01/meta.json",
        "rounds/01/events.jsonl",
        "rounds/01/test-results.json",
      ]),
    );
    for (const name of files) expect(fs.existsSync(path.join(out, name)), name).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"))).toMatchObject({
      sessionId: approvedId,
      outcome: "approved",
    });
    const events = fs.readFileSync(path.join(out, "task-events.jsonl"), "utf8").trim().split("\n");
    expect(events.length).toBeGreaterThan(0);
    for (const line of events) expect(() => JSON.parse(line)).not.toThrow();

    const again = await catcafe(["export", approvedId, "--out", out]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("is not empty");
  });

  it("forge new | status | pass take the demo idea through its PRD gate to Delivery; export holds the artifacts and the cost per stage; forge modify, session fork and forge revert act on its history", async () => {
    const idea = "A command-line word counter: node bin/wc.js <file> prints lines, words and characters. Include a unit test.";
    const started = await catcafe(["forge", "new", "--project", "demo", "--gates", "prd", "--json", idea]);
    expect(started.code, show(started)).toBe(0);
    const { sessionId } = json<{ sessionId: string }>(started);
    type Status = {
      status: string;
      outcome: string | null;
      waiting: { stage: string; actions: string[] } | null;
      stages: Array<{ name: string; iteration: number }>;
    };
    const statusNow = async () => {
      const r = await catcafe(["forge", "status", sessionId, "--json"]);
      expect(r.code, show(r)).toBe(0);
      return json<Status>(r);
    };
    const until = async (what: string, ok: (s: Status) => boolean) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const s = await statusNow();
        if (ok(s)) return s;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(s)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    for (const round of [1, 2]) {
      const s = await until(
        `the PRD gate, round ${round}`,
        (x) => x.waiting?.stage === "prd" && x.stages.find((st) => st.name === "prd")!.iteration === round,
      );
      expect(s.waiting!.actions).toEqual(["edit", "feedback", "pass", "abort"]);
      const table = await catcafe(["forge", "status", sessionId]);
      expect(table.stdout).toMatch(/^prd\s+waiting\b/m);
      expect(table.stdout).toContain(`Waiting for you at prd`);
      const passed = await catcafe(["forge", "pass", sessionId]);
      expect(passed.code, show(passed)).toBe(0);
    }
    const done = await until("delivery", (x) => x.status !== "InProgress");
    expect(done).toMatchObject({ status: "Completed", outcome: "completed" });
    // Nothing waits any more: a pass now is refused as a conflict.
    const late = await catcafe(["forge", "pass", sessionId]);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/already finished \(completed\)/);

    const out = path.join(tmp, "forge-export");
    const r = await catcafe(["export", sessionId, "--out", out, "--json"]);
    expect(r.code, show(r)).toBe(0);
    expect(json<{ files: string[] }>(r).files).toEqual(
      expect.arrayContaining([
        "forge/idea.md",
        "forge/prd.md",
        "forge/requirements.json",
        "forge/plan.json",
        "forge/code_metadata.json",
        "forge/delivery_report.md",
      ]),
    );
    const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8")) as {
      outcome: string;
      pipeline: { stages: Array<{ name: string; calls: number; iterations: number }> };
    };
    expect(summary.outcome).toBe("completed");
    expect(summary.pipeline.stages.find((st) => st.name === "prd")).toMatchObject({ calls: 4, iterations: 2 });
    expect(fs.readFileSync(path.join(out, "forge/requirements.json"), "utf8")).toContain('"R4"');

    // The delivered pipeline's history: a change (modify), a fork at an event, a refused revert.
    const modify = await catcafe(["forge", "modify", sessionId, "--json", "Add a --lines option that prints only the line count."]);
    expect(modify.code, show(modify)).toBe(0);
    const changed = json<{ sessionId: string; parentId: string }>(modify);
    expect(changed.parentId).toBe(sessionId);
    const deadline = Date.now() + 90_000;
    let modified = await catcafe(["forge", "status", changed.sessionId, "--json"]);
    while (json<{ status: string }>(modified).status === "InProgress" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      modified = await catcafe(["forge", "status", changed.sessionId, "--json"]);
    }
    expect(json<{ status: string; parent: unknown }>(modified)).toMatchObject({
      status: "Completed",
      parent: { sessionId, changeType: "modify" },
    });
    const fork = await catcafe(["session", "fork", sessionId, "--at", "5", "--note", "from the CLI"]);
    expect(fork.code, show(fork)).toBe(0);
    expect(fork.stdout).toMatch(new RegExp(`^Forked: s-[0-9a-f]{12} \\(from ${sessionId} at event 5; the original is unchanged\\)\\.`));
    const refused = await catcafe(["forge", "revert", sessionId, "--to", "nowhere"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('workflow forge has no stage or state "nowhere"');
  });

  it("a viewer's confirm is FORBIDDEN, explained, and changes nothing", async () => {
    const admin = createCatCafeClient({
      url: server.url,
      token: (JSON.parse(fs.readFileSync(path.join(adminHome, ".config", "catcafe", "config.json"), "utf8")) as { token: string }).token,
    });
    const viewer = { email: `viewer-${Date.now()}@cats.test`, password: "viewer-password-123" };
    await admin.users.create.mutate({ ...viewer, name: "A viewer", role: "viewer" });
    const viewerHome = homeDir("viewer");
    const signedIn = await login(viewerHome, viewer.email, viewer.password);
    expect(signedIn.code, show(signedIn)).toBe(0);

    const before = await admin.tasks.get.query({ sessionId: server.demoSessionId });
    const refused = await catcafe(["task", "confirm", server.demoSessionId], { home: viewerHome });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("FORBIDDEN: this needs the operator role (you are viewer)");
    expect(refused.stderr).toContain("Ask an admin");
    const asJson = await catcafe(["task", "confirm", server.demoSessionId, "--json"], { home: viewerHome });
    expect(asJson.code).toBe(1);
    expect(asJson.stdout).toBe("");
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: "FORBIDDEN", httpStatus: 403 } });
    expect(await admin.tasks.get.query({ sessionId: server.demoSessionId })).toEqual(before);

    // Reading is allowed.
    const list = await catcafe(["sessions", "list", "--json"], { home: viewerHome });
    expect(json<{ items: Array<{ id: string }> }>(list).items.map((s) => s.id)).toContain(server.demoSessionId);
  });

  it("intake: an operator sets a project's rules and webhook secret (from stdin, never echoed nor shown again); show and inbox read them; a viewer is FORBIDDEN", async () => {
    const home = homeDir("intake-admin");
    expect((await login(home, server.admin.email, server.admin.password)).code).toBe(0);
    const admin = createCatCafeClient({ url: server.url, token: savedToken(home) });
    const operator = { email: `intake-op-${Date.now()}@cats.test`, password: "intake-operator-123" };
    const viewer = { email: `intake-viewer-${Date.now()}@cats.test`, password: "intake-viewer-123" };
    await admin.users.create.mutate({ ...operator, name: "Intake operator", role: "operator" });
    await admin.users.create.mutate({ ...viewer, name: "Intake viewer", role: "viewer" });
    const opHome = homeDir("intake-operator");
    const viewerHome = homeDir("intake-viewer");
    expect((await login(opHome, operator.email, operator.password)).code).toBe(0);
    expect((await login(viewerHome, viewer.email, viewer.password)).code).toBe(0);

    const rules = await catcafe(
      [
        "intake",
        "rules",
        "demo",
        "--provider",
        "github",
        "--repository",
        "acme/demo",
        "--label",
        "ai-task",
        "--comment",
        "--auto-confirm",
        "label",
        "--json",
      ],
      { home: opHome },
    );
    expect(rules.code, show(rules)).toBe(0);
    expect(json<{ changed: number; rules: unknown }>(rules)).toMatchObject({
      rules: {
        provider: "github",
        repository: "acme/demo",
        maxPerHour: 10,
        triggers: {
          label: { name: "ai-task", workflow: "review_loop", autoConfirm: true },
          comment: { workflow: "review_loop", autoConfirm: false },
        },
      },
    });
    // Flags change what is saved: the comment trigger off, the rest kept.
    const off = await catcafe(["intake", "rules", "demo", "--off", "comment", "--json"], { home: opHome });
    expect(json<{ rules: { triggers: Record<string, unknown> } }>(off).rules.triggers).toEqual({
      label: { name: "ai-task", workflow: "review_loop", autoConfirm: true },
    });
    const badTrigger = await catcafe(["intake", "rules", "demo", "--off", "mention"], { home: opHome });
    expect(badTrigger.code).toBe(2);
    expect(badTrigger.stderr).toContain("mention is not a trigger");

    const secret = "cli-webhook-secret-0123456789abcdef";
    const set = await catcafe(["intake", "secret", "demo", "--secret-stdin"], { home: opHome, input: `${secret}\n` });
    expect(set.code, show(set)).toBe(0);
    expect(set.stdout).toMatch(/^Webhook secret of demo set on .+ by user:/);
    expect(set.stdout + set.stderr).not.toContain(secret);
    const shown = await catcafe(["intake", "show", "demo"], { home: opHome });
    expect(shown.stdout).toContain("github acme/demo (at most 10 tasks an hour)");
    expect(shown.stdout).toMatch(/Webhook secret: set on .+ by user:/);
    expect(shown.stdout).toContain("/api/hooks/github");
    expect(shown.stdout).not.toContain(secret);
    const held = await catcafe(["intake", "inbox", "--project", "demo"], { home: viewerHome });
    expect(held.code, show(held)).toBe(0);
    expect(held.stdout.trim()).toBe("No held delivery.");

    const refused = await catcafe(["intake", "rules", "demo", "--max-per-hour", "3"], { home: viewerHome });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("FORBIDDEN");
    const refusedSecret = await catcafe(["intake", "secret", "demo", "--secret-stdin"], {
      home: viewerHome,
      input: "viewer-secret-0123456789\n",
    });
    expect(refusedSecret.code).toBe(1);
    expect(refusedSecret.stderr).toContain("FORBIDDEN");
    expect(
      json<{ rules: { maxPerHour: number } }>(await catcafe(["intake", "show", "demo", "--json"], { home: viewerHome })).rules.maxPerHour,
    ).toBe(10);
  });

  it("a token from `token create` works until it is revoked, then it is refused", async () => {
    const created = await catcafe(["token", "create", "--name", "e2e script", "--password-stdin", "--json"], {
      input: server.admin.password,
    });
    expect(created.code, show(created)).toBe(0);
    const token = json<{ id: string; token: string; prefix: string }>(created);
    expect(token.token).toMatch(/^cc_/);

    const used = await catcafe(["sessions", "list", "--json"], {
      home: homeDir("script"),
      env: { CATCAFE_URL: server.url, CATCAFE_TOKEN: token.token },
    });
    expect(used.code, show(used)).toBe(0);
    const listed = json<Array<{ id: string; lastUsedAt: string | null; revokedAt: string | null }>>(
      await catcafe(["token", "list", "--json"]),
    );
    expect(listed.find((t) => t.id === token.id)).toMatchObject({ lastUsedAt: expect.any(String), revokedAt: null });

    const revoked = await catcafe(["token", "revoke", token.prefix, "--json"]);
    expect(revoked.code, show(revoked)).toBe(0);
    expect(json<{ id: string; revokedAt: string }>(revoked)).toMatchObject({ id: token.id, revokedAt: expect.any(String) });

    const refused = await catcafe(["sessions", "list"], {
      home: homeDir("script"),
      env: { CATCAFE_URL: server.url, CATCAFE_TOKEN: token.token },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("UNAUTHORIZED");
    expect(refused.stderr).toContain("revoked");
  });

  it("users: invite prints a one-time link on the CLI's server URL; an invitee accepts it; role, disable, enable by email; invitations listed and revoked", async () => {
    const invited = await catcafe(["users", "invite", "--role", "operator", "--expires-days", "3", "--json"]);
    expect(invited.code, show(invited)).toBe(0);
    const invitation = json<{ id: string; role: string; link: string; token: string }>(invited);
    expect(invitation.link).toBe(`${server.url}/invite/${invitation.token}`);
    const pending = json<Array<{ id: string }>>(await catcafe(["users", "invitations", "--json"]));
    expect(pending.map((i) => i.id)).toContain(invitation.id);

    const client = createCatCafeClient({ url: server.url });
    const email = `invited-${Date.now()}@cats.test`;
    await client.invitations.accept.mutate({ token: invitation.token, name: "Invited Cat", email, password: "invited-password-123" });
    const listed = await catcafe(["users", "list"]);
    expect(listed.stdout).toContain(email);
    expect(listed.stdout).toContain("operator");

    expect(json<{ role: string }>(await catcafe(["users", "role", email.toUpperCase(), "viewer", "--json"])).role).toBe("viewer");
    expect(json<{ disabledAt: string | null }>(await catcafe(["users", "disable", email, "--json"])).disabledAt).not.toBeNull();
    expect(json<{ disabledAt: string | null }>(await catcafe(["users", "enable", email, "--json"])).disabledAt).toBeNull();
    const nobody = await catcafe(["users", "role", "nobody@cats.test", "admin"]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain("no user with the email nobody@cats.test");
    const badRole = await catcafe(["users", "role", email, "owner"]);
    expect(badRole.code).toBe(2);

    const another = json<{ id: string }>(await catcafe(["users", "invite", "--role", "viewer", "--json"]));
    const revoked = await catcafe(["users", "revoke-invitation", another.id]);
    expect(revoked.code, show(revoked)).toBe(0);
    expect(json<Array<{ id: string }>>(await catcafe(["users", "invitations", "--json"])).map((i) => i.id)).not.toContain(another.id);
  });

  it("invalid input shows zod's field errors", async () => {
    const r = await catcafe(["task", "start", "--project", "demo", "   "]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("invalid input");
    expect(r.stderr).toMatch(/prompt \(<prompt>\): say what the task is/);
    const asJson = await catcafe(["task", "start", "--project", "demo", "--json", "   "]);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: "BAD_REQUEST", fieldErrors: { prompt: ["say what the task is"] } } });
  });

  it("every read command's --json output parses", async () => {
    const cases: Array<[string[], (value: unknown) => void]> = [
      [
        ["sessions", "list", "--state", "approved", "--limit", "5"],
        (v) => expect(v).toMatchObject({ items: expect.any(Array), nextCursor: null }),
      ],
      [
        ["session", "show", approvedId, "--events", "5"],
        (v) =>
          expect(v).toMatchObject({
            task: { sessionId: approvedId, outcome: "approved" },
            timeline: expect.any(Array),
            // Its live worktree, on the host of the runner that made it (docs/scaling.md).
            worktrees: [
              {
                host: expect.any(String),
                path: expect.stringMatching(new RegExp(`workspaces/${approvedId}$`)),
                placedAt: expect.any(String),
              },
            ],
          }),
      ],
      [
        ["runners", "list"],
        (v) => {
          // npm start's runner, sandboxed (bubblewrap works here).
          const runners = v as Array<{ live: boolean; sandbox: unknown }>;
          expect(runners.filter((r) => r.live)).toContainEqual(expect.objectContaining({ sandbox: { on: true, reason: null } }));
        },
      ],
      [["projects", "list"], (v) => expect(v).toEqual([{ id: "demo", name: expect.any(String), simulated: true }])],
      [
        ["projects", "show", "demo"],
        (v) => expect(v).toMatchObject({ id: "demo", allowlist: [["node", "--test", "**"]], settings: expect.any(Array) }),
      ],
      [["inbox"], (v) => expect(v).toMatchObject({ count: expect.any(Number), items: expect.any(Array) })],
      [
        ["session", "show", approvedId, "--context"],
        (v) =>
          expect(v).toMatchObject({
            sessionId: approvedId,
            workflow: { id: "review_loop", userDefined: false },
            limits: { stepTimeoutMs: 600_000, maxAttempts: 4 },
            agents: { coder: { agentId: "coder-sim" }, reviewer: { agentId: "reviewer-sim" }, tester: { agentId: "tester-sim" } },
          }),
      ],
      [
        ["config", "--project", "demo"],
        (v) =>
          expect((v as { settings: Array<{ path: string; source: string }> }).settings).toContainEqual(
            expect.objectContaining({ path: "timeouts.stepMs", source: "built-in" }),
          ),
      ],
      [
        ["token", "list"],
        (v) => {
          // At least the token this CLI signs in with, named, and never its hash.
          const tokens = v as Array<{ id: string; name: string }>;
          expect(tokens.length).toBeGreaterThan(0);
          for (const t of tokens) expect(t).toMatchObject({ id: expect.any(String), name: expect.any(String) });
          expect(JSON.stringify(tokens)).not.toMatch(/hash/i);
        },
      ],
      [["config", "validate", "--project", "demo"], (v) => expect(v).toMatchObject({ ok: true, found: true })],
      [
        ["brains", "check", "--project", "demo"],
        (v) => {
          // The demo's three roles are scripted brains: each checked, each fine.
          const checks = v as Array<{ provider: string; ok: boolean }>;
          expect(checks.length).toBeGreaterThanOrEqual(3);
          expect(checks.every((b) => b.provider === "scripted" && b.ok)).toBe(true);
        },
      ],
      [
        ["shells", "detect", "--shell", "claude"],
        (v) => expect(v).toEqual([expect.objectContaining({ shell: "claude", requiredRange: expect.any(String) })]),
      ],
      [
        ["projections", "rebuild"],
        (v) => expect(v).toMatchObject({ events: expect.any(Number), tables: expect.arrayContaining(["sessions"]), changedTables: [] }),
      ],
    ];
    for (const [args, check] of cases) {
      const r = await catcafe([...args, "--json"]);
      expect(r.code, `${args.join(" ")}\n${show(r)}`).toBe(0);
      check(json(r));
    }
  }, 120_000);

  it("runners list shows each runner's labels, the projects it cannot serve and, last, whether it runs agents sandboxed", async () => {
    const r = await catcafe(["runners", "list"]);
    expect(r.code, show(r)).toBe(0);
    const [header, ...rows] = r.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID +HOST +PID +VERSION +LIVE +STARTED +HEARTBEAT +LABELS +CANNOT SERVE +SANDBOX$/);
    expect(rows.filter((row) => / yes /.test(row))).toContainEqual(expect.stringMatching(/ on$/));
    // npm start's runner has a clone of every project (the demo's is at its registered path): it serves them all.
    expect(rows.filter((row) => / yes /.test(row))).toContainEqual(expect.stringMatching(/ — +none +on$/));
  });

  it("projects add registers a project with an agent per role and checks its .catcafe/ on the spot; a bad agent flag is a usage error", async () => {
    const repo = homeDir("own-repo");
    gitIn(repo, "init", "-q", "-b", "main");
    fs.mkdirSync(path.join(repo, ".catcafe"));
    fs.writeFileSync(
      path.join(repo, ".catcafe", "agents.json"),
      JSON.stringify({ agents: [{ id: "coder-1", role: "coder", defaultBrain: "gpt" }] }),
    );
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "init");
    const added = await catcafe([
      ...["projects", "add", "own", "--repo", repo, "--name", "Our service", "--allow", "npm test"],
      ...["--agent", "coder=claude", "--agent", "reviewer=openai:gpt-5", "--agent", "tester=simulated", "--json"],
    ]);
    expect(added.code, show(added)).toBe(0);
    const result = json<{ id: string; config: { found: boolean; ok: boolean; errors: string[] } }>(added);
    expect(result.config).toMatchObject({ found: true, ok: false });
    expect(result.config.errors).toEqual([
      expect.stringMatching(/^\.catcafe\/agents\.json: agents\[0\]\.defaultBrain: unknown brain "gpt"/),
    ]);
    const shown = json<{ repoPath: string; allowlist: string[][]; agents: Array<{ role: string; kind: string; model: string | null }> }>(
      await catcafe(["projects", "show", "own", "--json"]),
    );
    expect(shown.repoPath).toBe(repo);
    expect(shown.allowlist).toEqual([["npm", "test"]]);
    expect(shown.agents.filter((a) => a.role !== "coder" || a.kind === "claude").map((a) => [a.role, a.kind, a.model])).toEqual(
      expect.arrayContaining([
        ["coder", "claude", null],
        ["reviewer", "openai", "gpt-5"],
        ["tester", "scripted", null],
      ]),
    );
    const bad = await catcafe(["projects", "add", "own2", "--repo", repo, "--agent", "coder=gpt"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown kind "gpt"');
  });

  it("config validate checks a local .catcafe/ on the server and exits 1 with each error as file: path: problem", async () => {
    const repo = homeDir("repo");
    fs.mkdirSync(path.join(repo, ".catcafe"));
    fs.writeFileSync(path.join(repo, ".catcafe", "agents.json"), JSON.stringify({ agents: [{ id: "coder-1" }] }));
    const r = await catcafe(["config", "validate", repo, "--json"]);
    expect(r.code).toBe(1);
    const result = json<{ ok: boolean; errors: string[] }>(r);
    expect(result.ok).toBe(false);
    expect(result.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^\.catcafe\/agents\.json: agents\[0\]\.role: /)]));
  });

  it("go runs a workflow for a target agent and watches it; an unknown agent is NOT_FOUND", async () => {
    const started = await catcafe(["go", "coder-sim", "Fix slugify() with go", "--project", "demo", "--no-watch", "--json"]);
    expect(started.code, show(started)).toBe(0);
    const go = json<{ sessionId: string; role: string; agentId: string; workflow: string; mode: string }>(started);
    expect(go).toMatchObject({ role: "coder", agentId: "coder-sim", workflow: "review_loop", mode: "proposal" });
    const watched = await catcafe(["watch", go.sessionId, "--stop-at-confirm"]);
    expect(watched.code, show(watched)).toBe(0);
    expect(watched.stdout).toContain(`catcafe task confirm ${go.sessionId}`);

    const unknown = await catcafe(["go", "no-such-agent", "anything", "-p", "demo"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('NOT_FOUND: project demo has no agent "no-such-agent"');
  }, 120_000);

  it("chat start | say | mode | watch | end drive a conversation on the demo project; the mode endpoints answer as the seed says", async () => {
    const started = await catcafe([
      "chat",
      "start",
      "-p",
      "demo",
      "--mode",
      "voting",
      "--config",
      '{"quorum": 2}',
      "--json",
      "Which runner?",
    ]);
    expect(started.code, show(started)).toBe(0);
    const { sessionId } = json<{ sessionId: string }>(started);
    const watched = await catcafe(["chat", "watch", sessionId, "--until-idle"]);
    expect(watched.code, show(watched)).toBe(0);
    expect(watched.stdout).toMatch(/vote 1: node:test wins/);
    expect(watched.stdout).toMatch(/✔ idle \(voting\)/);

    const badMode = await catcafe(["chat", "mode", sessionId, "debate"]);
    expect(badMode.code).toBe(1);
    expect(badMode.stderr).toContain('no mode "debate"');
    const switched = await catcafe(["chat", "mode", sessionId, "free_discussion", "--json"]);
    expect(switched.code, show(switched)).toBe(0);
    expect(json(switched)).toMatchObject({ mode: "free_discussion" });
    const said = await catcafe(["chat", "say", sessionId, "@planner-sim", "what", "next?", "--watch", "--json"]);
    expect(said.code, show(said)).toBe(0);
    const lines = said.stdout
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l) as { type: string; entry?: { kind: string; agent?: string } });
    expect(lines.filter((l) => l.entry?.kind === "agent").map((l) => l.entry!.agent)).toEqual(["planner-sim"]);
    expect(lines.at(-1)).toMatchObject({ type: "status", status: "open", inFlight: 0 });
    const mode = await catcafe(["chat", "mode", sessionId, "--json"]);
    expect(json(mode)).toMatchObject({ mode: "free_discussion", config: { name: "free_discussion", enabled: true } });
    const ended = await catcafe(["chat", "end", sessionId, "--reason", "done"]);
    expect(ended.code, show(ended)).toBe(0);
    const after = await catcafe(["chat", "say", sessionId, "@coder-sim", "hello?"]);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain("CONFLICT");
    const list = await catcafe(["chat", "list", "-p", "demo", "--json"]);
    expect(json<Array<{ id: string; state: string }>>(list).find((c) => c.id === sessionId)).toMatchObject({ state: "terminated" });

    // GET /api/modes and GET /api/sessions/:id/mode with the CLI's token; an anonymous call is 401.
    const { token } = JSON.parse(fs.readFileSync(path.join(adminHome, ".config", "catcafe", "config.json"), "utf8")) as { token: string };
    expect((await fetch(`${server.url}/api/modes`)).status).toBe(401);
    const modes = await fetch(`${server.url}/api/modes`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await modes.json()) as Array<{ name: string }>).map((m) => m.name)).toEqual([
      "free_discussion",
      "sop",
      "voting",
      "expert_routing",
    ]);
    const current = await fetch(`${server.url}/api/sessions/${sessionId}/mode`, { headers: { authorization: `Bearer ${token}` } });
    expect(await current.json()).toMatchObject({ mode: "free_discussion", config: { enabled: false } });
  }, 60_000);

  it("deliver waits for the outcome: the demo merges approved work into its branch `delivered`; again, it was merged already; --no-wait returns the request", async () => {
    const merged = await catcafe(["deliver", approvedId]);
    expect(merged.code, show(merged)).toBe(0);
    expect(merged.stdout).toMatch(new RegExp(`^✔ catcafe/${approvedId} merged into delivered \\(fast forward, now [0-9a-f]{12}\\)`));
    const again = await catcafe(["deliver", approvedId, "--json"]);
    expect(again.code, show(again)).toBe(0);
    expect(json(again)).toMatchObject({ outcome: { type: "DeliveryCompleted", merged: { target: "delivered", how: "already_merged" } } });
    const asked = await catcafe(["deliver", approvedId, "--no-wait", "--json"]);
    expect(asked.code, show(asked)).toBe(0);
    expect(json(asked)).toMatchObject({ sessionId: approvedId, method: "merge", branch: `catcafe/${approvedId}` });
  }, 60_000);

  it("usage: a session whose coder is an agent CLI and reviewer a brain, both reporting usage; session show and catcafe usage give the stubs' totals, priced with settings.json", async () => {
    const brain = await startUsageBrain();
    try {
      // The fake CLI is named on the agent's command line: its path readable by any user, for the sandbox.
      fs.chmodSync(tmp, 0o755);
      const root = homeDir("usage");
      const settingsFile = path.join(server.dataDir, "settings.json");
      const settings = fs.existsSync(settingsFile) ? (JSON.parse(fs.readFileSync(settingsFile, "utf8")) as Record<string, unknown>) : {};
      fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, pricing: USAGE_PRICING }));
      const admin = createCatCafeClient({
        url: server.url,
        token: (JSON.parse(fs.readFileSync(path.join(adminHome, ".config", "catcafe", "config.json"), "utf8")) as { token: string }).token,
      });
      await admin.projects.upsert.mutate(usageProject("usage", "Usage", root, brain.url));
      const started = await catcafe(["task", "start", "--project", "usage", "--mode", "implementation", "--json", "Fix sum()"]);
      expect(started.code, show(started)).toBe(0);
      const { sessionId } = json<{ sessionId: string }>(started);
      const watched = await catcafe(["watch", sessionId]);
      expect(watched.code, show(watched)).toBe(0);

      const shown = await catcafe(["session", "show", sessionId, "--events", "0"]);
      expect(shown.code, show(shown)).toBe(0);
      // 0.01059 + 0.00472 EUR: to the cent, finer below a cent, the cached input at the cache rates. The scripted tester's call counts, with no tokens.
      const cost = "0.02";
      expect(shown.stdout).toContain(`  usage     3,500 in (cache: 1,324 read, 200 written) / 550 out tokens, 3 calls, ${cost} EUR`);
      expect(shown.stdout).toContain(`${CLI_MODEL}: 1,500 in (cache: 300 read, 200 written) / 450 out tokens, 1 call, 0.01 EUR`);
      expect(shown.stdout).toContain(`${BRAIN_MODEL}: 2,000 in (cache: 1,024 read) / 100 out tokens, 1 call, 0.0047 EUR`);
      const asJson = json<{ usage: { total: Record<string, unknown> } }>(
        await catcafe(["session", "show", sessionId, "--events", "0", "--json"]),
      );
      expect(asJson.usage.total).toEqual({
        calls: 3,
        inputTokens: 3500,
        outputTokens: 550,
        cachedInputTokens: 1324,
        cacheCreationInputTokens: 200,
        cost: CLI_COST + BRAIN_COST,
        unpriced: [],
      });

      const report = await catcafe(["usage", "--days", "7", "--project", "usage"]);
      expect(report.code, show(report)).toBe(0);
      expect(report.stdout).toMatch(
        new RegExp(
          `^Since \\d{4}-\\d{2}-\\d{2}: 3,500 in \\(cache: 1,324 read, 200 written\\) / 550 out tokens, 3 calls, ${cost} EUR$`,
          "m",
        ),
      );
      expect(report.stdout).toMatch(/^usage \(Usage\) +3,500 in \(cache: 1,324 read, 200 written\) \/ 550 out tokens/m);
    } finally {
      await brain.close();
    }
  }, 90_000);

  it("catcafe mcp: an MCP client lists the tools, starts a task on the demo project and reads it to awaiting_operator_confirm; a viewer's confirm through it is refused", async () => {
    const connect = async (home: string) => {
      const client = new Client({ name: "cli-e2e", version: "1.0.0" });
      const env = cleanEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, ".config") });
      for (const name of ["CATCAFE_URL", "CATCAFE_TOKEN"]) delete env[name];
      await client.connect(
        new StdioClientTransport({ command: BIN, args: ["mcp"], env: env as Record<string, string>, cwd: tmp, stderr: "pipe" }),
      );
      return client;
    };
    const text = (r: Awaited<ReturnType<Client["callTool"]>>) => (r.content as Array<{ type: string; text: string }>)[0]!.text;
    const admin = await connect(adminHome);
    try {
      const { tools } = await admin.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        "cancel",
        "confirm",
        "follow_up",
        "get_bake_off",
        "get_session",
        "judge_bake_off",
        "list_sessions",
        "pick_winner",
        "start_task",
      ]);
      const started = await admin.callTool({
        name: "start_task",
        arguments: { projectId: "demo", prompt: "Fix slugify() via MCP", mode: "proposal" },
      });
      expect(started.isError, text(started)).toBeFalsy();
      const { sessionId } = JSON.parse(text(started)) as { sessionId: string };
      await expect
        .poll(
          async () => (JSON.parse(text(await admin.callTool({ name: "get_session", arguments: { sessionId } }))) as { fsm: string }).fsm,
          {
            timeout: 30_000,
            interval: 300,
          },
        )
        .toBe("awaiting_operator_confirm");
      const listed = JSON.parse(text(await admin.callTool({ name: "list_sessions", arguments: { limit: 5 } }))) as Array<{ id: string }>;
      expect(listed.map((s) => s.id)).toContain(sessionId);

      const viewer = await connect(path.join(tmp, "viewer"));
      try {
        const refused = await viewer.callTool({ name: "confirm", arguments: { sessionId } });
        expect(refused.isError).toBe(true);
        expect(text(refused)).toContain("FORBIDDEN: this needs the operator role (you are viewer)");
        const read = await viewer.callTool({ name: "get_session", arguments: { sessionId } });
        expect(JSON.parse(text(read))).toMatchObject({ sessionId, fsm: "awaiting_operator_confirm" });
      } finally {
        await viewer.close();
      }
    } finally {
      await admin.close();
    }
  }, 90_000);

  it("POST /api/mcp: the same tools over HTTP with an API token: listed, a task started on the demo project and read to awaiting_operator_confirm; a viewer's confirm is refused; no or a bad token is a 401", async () => {
    const tokenOf = (home: string) =>
      (JSON.parse(fs.readFileSync(path.join(home, ".config", "catcafe", "config.json"), "utf8")) as { token: string }).token;
    const endpoint = new URL("/api/mcp", server.url);
    const connect = async (token: string) => {
      const client = new Client({ name: "cli-e2e-http", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      return client;
    };
    const text = (r: Awaited<ReturnType<Client["callTool"]>>) => (r.content as Array<{ type: string; text: string }>)[0]!.text;
    const admin = await connect(tokenOf(adminHome));
    const viewer = await connect(tokenOf(path.join(tmp, "viewer")));
    try {
      const { tools } = await admin.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        "cancel",
        "confirm",
        "follow_up",
        "get_bake_off",
        "get_session",
        "judge_bake_off",
        "list_sessions",
        "pick_winner",
        "start_task",
      ]);
      const started = await admin.callTool({
        name: "start_task",
        arguments: { projectId: "demo", prompt: "Fix slugify() via MCP over HTTP", mode: "proposal" },
      });
      expect(started.isError, text(started)).toBeFalsy();
      const { sessionId } = JSON.parse(text(started)) as { sessionId: string };
      const fsmOf = async (client: Client) =>
        (JSON.parse(text(await client.callTool({ name: "get_session", arguments: { sessionId } }))) as { fsm: string }).fsm;
      await expect.poll(() => fsmOf(admin), { timeout: 30_000, interval: 300 }).toBe("awaiting_operator_confirm");
      const listed = JSON.parse(text(await viewer.callTool({ name: "list_sessions", arguments: { limit: 5 } }))) as Array<{ id: string }>;
      expect(listed.map((s) => s.id)).toContain(sessionId);

      const refused = await viewer.callTool({ name: "confirm", arguments: { sessionId } });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain("FORBIDDEN: this needs the operator role (you are viewer)");
      expect(await fsmOf(viewer)).toBe("awaiting_operator_confirm");
      const unknown = await admin.callTool({ name: "get_session", arguments: { sessionId: "s-000000000000" } });
      expect(unknown.isError).toBe(true);
      expect(text(unknown)).toMatch(/^NOT_FOUND: /);
    } finally {
      await Promise.all([admin.close(), viewer.close()]);
    }

    const mcpHeaders = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
    });
    for (const authorization of [undefined, "Bearer cc_not-a-token", "Basic YWRtaW46cHc="]) {
      const r = await fetch(endpoint, {
        method: "POST",
        headers: { ...mcpHeaders, ...(authorization ? { Authorization: authorization } : {}) },
        body: initialize,
      });
      expect(r.status, authorization).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="catcafe"');
      expect(await r.json()).toMatchObject({ error: { code: "UNAUTHORIZED" } });
    }
    const bearer = { ...mcpHeaders, Authorization: `Bearer ${tokenOf(adminHome)}` };
    // Stateless: a request needs no initialize before it (the curl of docs/api.md).
    const toolsList = await fetch(endpoint, {
      method: "POST",
      headers: bearer,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(toolsList.status).toBe(200);
    expect(toolsList.headers.get("mcp-session-id")).toBeNull();
    expect(((await toolsList.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(9);
    const notJsonRpc = await fetch(endpoint, { method: "POST", headers: bearer, body: JSON.stringify({ hello: "world" }) });
    expect(notJsonRpc.status).toBe(400);
    expect(await notJsonRpc.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { message: expect.stringContaining("Invalid JSON-RPC message") },
    });
    const notJson = await fetch(endpoint, { method: "POST", headers: bearer, body: "confirm s-1" });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error: Invalid JSON" } });
    const tooLarge = await fetch(endpoint, { method: "POST", headers: bearer, body: JSON.stringify({ pad: "x".repeat(1024 * 1024) }) });
    expect(tooLarge.status).toBe(413);
    const stream = await fetch(endpoint, { headers: { ...bearer, Accept: "text/event-stream" } });
    expect(stream.status).toBe(405);
    expect(stream.headers.get("allow")).toBe("POST");
  }, 90_000);

  it("logout revokes the token login created and removes the config file", async () => {
    const file = path.join(adminHome, ".config", "catcafe", "config.json");
    const { token } = JSON.parse(fs.readFileSync(file, "utf8")) as { token: string };
    const r = await catcafe(["logout", "--json"]);
    expect(r.code, show(r)).toBe(0);
    expect(json(r)).toMatchObject({ removed: true, revoked: true });
    expect(fs.existsSync(file)).toBe(false);
    expect(await createCatCafeClient({ url: server.url, token }).auth.me.query()).toBeNull();
  });
});
