// req N4: a provider key given to agents through the environment never reaches events,
// blobs, projections, exports or logs, and the server's own secrets never reach agents.
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSession } from "../../server/export";
import { startTask } from "../../server/tasks/commands";
import { startConversation } from "../../server/conversations/service";
import { startBrainStub, startEventStream, streamOf, stubAccess, type BrainStub } from "../helpers/brains-stub";
import { allowAgents } from "../helpers/access";
import { leaksOf as leaksOfAnywhere } from "../helpers/leaks";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, testPlan, type Harness } from "../helpers/tasks";

const KEY = "sk-catcafe-test-7f3a9c1e5b2d4a68";
const SERVER_SECRETS = {
  DATABASE_URL: "postgresql://leak:leak-password-4411@db.invalid/x",
  NEXTAUTH_SECRET: "nextauth-secret-do-not-leak-0192",
};

let db: TestDatabase;
let h: Harness;
let stub: BrainStub;
const saved: Record<string, string | undefined> = {};
const logs: string[] = [];

beforeAll(async () => {
  for (const [k, v] of Object.entries({ CATCAFE_TEST_PROVIDER_API_KEY: KEY, ...SERVER_SECRETS })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  db = await createTestDatabase();
  // The key variable its agents are given, allowed as an admin would (settings access.agentEnv).
  await allowAgents(db, { agentEnv: ["CATCAFE_TEST_PROVIDER_API_KEY"] });
  h = createHarness(db);
  await h.startRunner((line) => logs.push(line));
  // The reviewer is an OpenAI-compatible brain behind a local stub: it approves.
  stub = await startBrainStub(async (_req, res) => {
    startEventStream(res);
    for (const chunk of streamOf("openai", [JSON.stringify({ decision: "approve", summary: "Fine.", findings: [] })])) res.write(chunk);
    res.end();
  });
});

afterAll(async () => {
  await stub?.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const leaksOf = (sessionId: string, secrets: string[]) => leaksOfAnywhere(db, sessionId, secrets, logs);

/** A task run to its end on a project whose coder is `coder` (a scripted approving reviewer, the usual test plan). */
async function runWithCoder(project: string, coder: Record<string, unknown>) {
  const projectId = await h.project(project, {
    coder,
    reviewer: [{ reply: JSON.stringify({ decision: "approve", summary: "Fine.", findings: [] }) }],
    tester: [{ reply: testPlan() }],
  });
  const { sessionId } = await startTask(
    { store: db.store, pool: db.pool },
    { projectId, prompt: "Fix sum()", mode: "implementation" },
    testActor,
  );
  await h.waitFor(sessionId, "finish", (st) => st.status === "finished", 60_000);
  return { sessionId, events: await db.store.readStream(sessionId) };
}

describe("secrets", () => {
  it("a run with a keyed brain and a keyed command agent records the key nowhere, and agents never see the server's secrets", async () => {
    const root = path.dirname(h.repo);
    // The coder is a command agent given the provider key (by name) that fixes the file and
    // reports what it was given: its variables' names and the key's hash (never the key; in
    // the sandbox it can write nowhere but the worktree, whose files are recorded).
    const coder = path.join(root, "coder.cjs");
    fs.writeFileSync(
      coder,
      `const fs = require("node:fs");
      fs.writeFileSync("src/sum.js", ${JSON.stringify(FIXED_SUM)});
      const key = process.env.CATCAFE_TEST_PROVIDER_API_KEY || "";
      const seen = { names: Object.keys(process.env).sort(), keyHash: require("node:crypto").createHash("sha256").update(key).digest("hex"), values: Object.values(process.env).join("\\n") };
      console.log("fixed sum; " + JSON.stringify({ names: seen.names, keyHash: seen.keyHash, dbUrlSeen: seen.values.includes(${JSON.stringify(SERVER_SECRETS.DATABASE_URL)}) }));`,
    );
    const projectId = await h.project(
      "secrets",
      {
        coder: [{ reply: "Proposal: make it add." }],
        reviewer: [{ reply: "Looks fine." }],
        tester: [{ reply: "Run node --test." }, { reply: testPlan() }],
      },
      { settings: stubAccess },
    );
    // Roles after the roundtable: a keyed command coder and a keyed HTTP reviewer.
    await db.pool.query(`UPDATE projects SET agents = agents || $2::jsonb WHERE id = $1`, [
      projectId,
      JSON.stringify({
        coder: { kind: "command", id: "coder-cmd", argv: [process.execPath, coder], passEnv: ["CATCAFE_TEST_PROVIDER_API_KEY"] },
        reviewer: {
          kind: "openai",
          id: "reviewer-brain",
          baseUrl: stub.url,
          model: "stub",
          apiKeyEnv: "CATCAFE_TEST_PROVIDER_API_KEY",
          rateLimit: { minIntervalMs: 0 },
        },
      }),
    ]);
    const { sessionId } = await startTask(
      { store: db.store, pool: db.pool },
      { projectId, prompt: "Fix sum() without leaking anything", mode: "implementation" },
      testActor,
    );
    const done = await h.waitFor(sessionId, "finish", (s) => s.status === "finished");
    expect(done.outcome).toBe("approved");

    // The key really was used: sent to the provider as the auth header, given to the coder.
    expect(stub.requests.some((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    const reply = (await db.store.readStream(sessionId))
      .filter((e) => e.type === "AgentOutputRecorded")
      .map((e) => (e.data as { preview: string }).preview)
      .find((t) => t.startsWith("fixed sum; "));
    const coderSaw = JSON.parse(reply!.slice("fixed sum; ".length)) as { names: string[]; keyHash: string; dbUrlSeen: boolean };
    expect(coderSaw.keyHash).toBe(createHash("sha256").update(KEY).digest("hex"));
    // ... and the server's own secrets never reached the agent.
    expect(coderSaw.names).toContain("CATCAFE_TEST_PROVIDER_API_KEY");
    expect(coderSaw.names).not.toContain("DATABASE_URL");
    expect(coderSaw.names).not.toContain("NEXTAUTH_SECRET");
    expect(coderSaw.dbUrlSeen).toBe(false);

    expect(logs.length).toBeGreaterThan(5); // the runner did log this run
    expect(await leaksOf(sessionId, [KEY, SERVER_SECRETS.DATABASE_URL, SERVER_SECRETS.NEXTAUTH_SECRET, "leak-password-4411"])).toEqual([]);
  });

  it("a server secret that reaches an agent's reply or a test's output anyway is redacted before it is recorded, and the redaction counted", async () => {
    const leak = SERVER_SECRETS.NEXTAUTH_SECRET;
    const dbPassword = "leak-password-4411";
    // The coder "found" the secret and writes a test that prints it and the database password
    // (encoded in the file, so only the test's output holds them).
    const encoded = Buffer.from(`secret=${leak} db=${dbPassword}`).toString("base64");
    const leakyTest = `require("node:test")("leaks", () => { console.log(Buffer.from("${encoded}", "base64").toString()); });\n`;
    // A command agent that found the secret on the machine (a file its command line names,
    // which the sandbox shows it) and says it.
    const root = path.dirname(h.repo);
    const found = path.join(root, "found-secret.txt");
    fs.writeFileSync(found, leak, { mode: 0o644 });
    const coder = path.join(root, "leaky-coder.cjs");
    fs.writeFileSync(
      coder,
      `const fs = require("node:fs");
      fs.writeFileSync("src/sum.js", ${JSON.stringify(FIXED_SUM)});
      fs.writeFileSync("test/leak.test.js", ${JSON.stringify(leakyTest)});
      console.log("Fixed. By the way: " + fs.readFileSync(process.argv[2], "utf8"));`,
    );
    const { sessionId, events } = await runWithCoder("leaky", {
      kind: "command",
      id: "leaky-coder",
      argv: [process.execPath, coder, found],
    });
    const test = events.find((e) => e.type === "TestCommandRecorded")?.data as { stdoutTail: string; redactions?: number };
    expect(test.stdoutTail).toContain("secret=[redacted NEXTAUTH_SECRET] db=[redacted the database password]");
    expect(test.redactions).toBe(2);
    const build = events.find(
      (e) => e.type === "StepCompleted" && (e.data as { output: { kind: string; commit?: unknown } }).output.commit,
    );
    expect((build?.data as { output: { redactions?: number; preview: string } }).output).toMatchObject({
      redactions: 1,
      preview: expect.stringContaining("[redacted NEXTAUTH_SECRET]"),
    });
    const exported = JSON.stringify(await exportSession(db.store, db.pool, sessionId));
    const blobs = (await db.pool.query<{ content: Buffer }>("SELECT content FROM blobs")).rows.map((r) => r.content);
    for (const value of [leak, dbPassword]) {
      expect(JSON.stringify(events)).not.toContain(value);
      expect(exported).not.toContain(value);
      expect(blobs.filter((b) => b.includes(value))).toEqual([]);
    }
  });

  it("a malicious repository's test file and a malicious command agent go after the server's secrets: nothing is reached, nothing recorded", async () => {
    // The server's secrets on this machine: the data directory's secrets.json (0700 / 0600, as
    // npm start makes it) and this process's environment (the runner runs in it here).
    const root = path.dirname(h.repo);
    const dataDir = path.join(root, "data");
    fs.mkdirSync(dataDir, { mode: 0o700 });
    const secretsFile = path.join(dataDir, "secrets.json");
    fs.writeFileSync(secretsFile, JSON.stringify({ nextauthSecret: SERVER_SECRETS.NEXTAUTH_SECRET }), { mode: 0o600 });
    // Everything either of them can think of, printed: the secrets file, every /proc/<pid>/environ
    // it can see, this process's by pid, the user's home, and a call out.
    const attack = `
      const fs = require("node:fs");
      const out = [];
      const grab = (p) => { try { out.push(p + "=" + fs.readFileSync(p, "utf8")); } catch (e) { out.push(p + ": " + e.code); } };
      grab(${JSON.stringify(secretsFile)});
      grab("/proc/${process.pid}/environ");
      for (const pid of fs.readdirSync("/proc").filter((x) => /^\\d+$/.test(x))) grab("/proc/" + pid + "/environ");
      try { out.push("home: " + fs.readdirSync(${JSON.stringify(os.homedir())}).join(",")); } catch (e) { out.push("home: " + e.code); }
      console.log(out.join("\\n"));`;
    const encoded = Buffer.from(attack).toString("base64");
    const testFile = `require("node:test")("attack", () => { eval(Buffer.from("${encoded}", "base64").toString()); });\n`;
    const coder = path.join(root, "attacking-coder.cjs");
    fs.writeFileSync(
      coder,
      `const fs = require("node:fs");
      fs.writeFileSync("src/sum.js", ${JSON.stringify(FIXED_SUM)});
      fs.writeFileSync("test/attack.test.js", Buffer.from(${JSON.stringify(Buffer.from(testFile).toString("base64"))}, "base64").toString());
      (() => {${attack}})();`,
    );
    const { sessionId, events } = await runWithCoder("attack", { kind: "command", id: "attacking-coder", argv: [process.execPath, coder] });
    // Both ran, and both were told no.
    const test = events.find((e) => e.type === "TestCommandRecorded")?.data as { stdoutTail: string; redactions?: number };
    const build = events.find((e) => e.type === "StepCompleted" && (e.data as { output: { commit?: unknown } }).output.commit)?.data as {
      output: { preview: string; redactions?: number; sandboxed?: boolean };
    };
    for (const said of [test.stdoutTail, build.output.preview]) {
      expect(said).toContain(`${secretsFile}: ENOENT`);
      expect(said).toContain(`/proc/${process.pid}/environ: ENOENT`);
    }
    expect(build.output.sandboxed).toBe(true);
    // What it could read (its own /proc/<pid>/environ, NUL-separated) is recorded with U+FFFD
    // for each NUL: such output no longer fails every attempt of the step.
    expect(build.output.preview).toContain("\uFFFD");
    expect(test.redactions ?? 0).toBe(0); // nothing to redact: nothing was read
    expect(build.output.redactions ?? 0).toBe(0);
    expect(await leaksOf(sessionId, [SERVER_SECRETS.DATABASE_URL, SERVER_SECRETS.NEXTAUTH_SECRET, "leak-password-4411", KEY])).toEqual([]);
  });

  it("an agent called in a conversation goes after the server's secrets (environment, secrets file, /proc, home, a call out): nothing is reached, nothing recorded", async () => {
    const root = path.dirname(h.repo);
    const dataDir = path.join(root, "chat-data");
    fs.mkdirSync(dataDir, { mode: 0o700 });
    const secretsFile = path.join(dataDir, "secrets.json");
    fs.writeFileSync(secretsFile, JSON.stringify({ nextauthSecret: SERVER_SECRETS.NEXTAUTH_SECRET }), { mode: 0o600 });
    const agent = path.join(root, "attacking-chatter.cjs");
    fs.writeFileSync(
      agent,
      `const fs = require("node:fs");
      const out = ["env: " + Object.keys(process.env).join(",") + " " + (process.env.DATABASE_URL ?? "no DATABASE_URL")];
      const grab = (p) => { try { out.push(p + "=" + fs.readFileSync(p, "utf8")); } catch (e) { out.push(p + ": " + e.code); } };
      grab(${JSON.stringify(secretsFile)});
      grab("/proc/${process.pid}/environ");
      for (const pid of fs.readdirSync("/proc").filter((x) => /^\\d+$/.test(x))) grab("/proc/" + pid + "/environ");
      try { out.push("home: " + fs.readdirSync(${JSON.stringify(os.homedir())}).join(",")); } catch (e) { out.push("home: " + e.code); }
      fetch(${JSON.stringify(stub.url)}).then(() => out.push("network: reached"), (e) => out.push("network: " + (e.cause?.code ?? e.message)))
        .finally(() => console.log(out.join("\\n")));`,
    );
    await h.project("chat-attack", { coder: { kind: "command", id: "chatter", argv: [process.execPath, agent] } });
    const { sessionId } = await startConversation(
      { store: db.store, pool: db.pool },
      { projectId: "chat-attack", message: "@chatter hello" },
      testActor,
    );
    let events = await db.store.readStream(sessionId);
    for (let i = 0; i < 600 && !events.some((e) => e.type === "AgentReplied" || e.type === "AgentCallFailed"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      events = await db.store.readStream(sessionId);
    }
    const reply = events.find((e) => e.type === "AgentReplied")?.data as { text: string } | undefined;
    expect(reply, JSON.stringify(events.map((e) => e.type))).toBeDefined();
    expect(reply!.text).toContain("no DATABASE_URL");
    expect(reply!.text).toContain(`${secretsFile}: ENOENT`);
    expect(reply!.text).toContain(`/proc/${process.pid}/environ: ENOENT`);
    expect(reply!.text).not.toContain("network: reached");
    const completed = events.find((e) => e.type === "StepCompleted")?.data as { output: { sandboxed?: boolean; redactions?: number } };
    expect(completed.output.sandboxed).toBe(true);
    expect(completed.output.redactions ?? 0).toBe(0);
    expect(await leaksOf(sessionId, [SERVER_SECRETS.DATABASE_URL, SERVER_SECRETS.NEXTAUTH_SECRET, "leak-password-4411", KEY])).toEqual([]);
  });
});
