// Session export (req E8) against a real review-loop session run by the runner: every
// exported file is checked against the events and blobs it was made from.
import fs from "node:fs";
import path from "node:path";
import { unzipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "../../server/errors";
import { getBlob } from "../../server/events/blobs";
import { readTimeline } from "../../server/events/timeline";
import type { RecordedEvent } from "../../server/events/types";
import {
  exportArchive,
  exportSession,
  HIDDEN_FOR_VIEWERS,
  renderSessionExport,
  writeExportDir,
  type ExportFiles,
  type RoundMeta,
  type SessionSummary,
  type StateEventLine,
  type TimelineLine,
} from "../../server/export";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { rerunTask } from "../../server/tasks/fork";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, reviewApprove, reviewChanges, tempDir, testPlan, type Harness, ofType } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let sessionId: string;
let events: RecordedEvent[];
let files: ExportFiles;

const text = (name: string) => {
  const content = files.get(name);
  if (content === undefined) throw new Error(`${name} is not in the export`);
  return content.toString();
};
const json = <T>(name: string) => JSON.parse(text(name)) as T;
const jsonl = <T>(name: string) =>
  text(name)
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
const bytes = (content: Buffer | string) => (typeof content === "string" ? Buffer.from(content, "utf8") : content);
const blob = async (hash: string) => (await getBlob(db.pool, hash)).content;

beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
  const projectId = await h.project("export", {
    coder: [
      { reply: "Proposal: sum subtracts; make it add." },
      { reply: "First try.", files: { "src/sum.js": "function sum(a, b) {\n  return a * b;\n}\nmodule.exports = { sum };\n" } },
      { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } },
    ],
    reviewer: [{ reply: "Fine; mind negative numbers." }, { reply: reviewChanges("sum multiplies") }, { reply: reviewApprove }],
    tester: [{ reply: "One node:test covers it." }, { reply: testPlan() }],
  });
  ({ sessionId } = await startTask(
    { store: db.store, pool: db.pool },
    { projectId, prompt: "Fix sum() so the test passes", mode: "proposal" },
    testActor,
  ));
  await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
  await confirmTask({ store: db.store, pool: db.pool }, { sessionId, via: "button" }, testActor);
  const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
  expect(done.outcome).toBe("approved");
  events = await db.store.readStream(sessionId);
  files = await exportSession(db.store, db.pool, sessionId);
});

describe("session export", () => {
  it("lays out the export layout's files: summary, task events, timeline, and one folder per round", () => {
    const round1 = [
      "coder-discussion.txt",
      "reviewer-discussion.txt",
      "tester-discussion.txt",
      "coder-build.txt",
      "changes.diff",
      "reviewer-verdict.txt",
      "reviewer-verdict.parsed.json",
    ];
    const round2 = [
      "coder-build.txt",
      "changes.diff",
      "reviewer-verdict.txt",
      "reviewer-verdict.parsed.json",
      "tester-test.txt",
      "tester-test.parsed.json",
    ];
    const common = ["meta.json", "events.jsonl", "test-results.json"];
    expect([...files.keys()].sort()).toEqual(
      [
        "summary.json",
        "task-events.jsonl",
        "task-timeline.json",
        "feedback_history.json",
        ...[...common, ...round1].map((f) => `rounds/01/${f}`),
        ...[...common, ...round2].map((f) => `rounds/02/${f}`),
      ].sort(),
    );
  });

  it("feedback_history.json holds every piece of feedback in order: here the reviewer's finding of round 1", () => {
    const history = json<Array<{ source: string; severity: string; iteration: number; text: string; by: string }>>("feedback_history.json");
    expect(history).toEqual([
      expect.objectContaining({ source: "review", severity: "blocking", iteration: 1, text: expect.stringContaining("sum multiplies") }),
    ]);
    expect(history[0]!.by).toMatch(/^agent:/);
  });

  it("summary.json says what the TaskStarted, SessionFinalized and SessionStateChanged events say", () => {
    const summary = json<SessionSummary>("summary.json");
    const created = ofType<{ title: string }>(events, "SessionCreated")[0]!;
    const started = ofType<{
      workflow: string;
      mode: string;
      prompt: string;
      maxIterations: number;
      project: { id: string; name: string; baseCommit: string };
    }>(events, "TaskStarted")[0]!;
    const final = ofType<{
      outcome: string;
      reason: string | null;
      iterations: number;
      unresolved: string[];
      errorClass: string | null;
      diagnosis: string | null;
    }>(events, "SessionFinalized")[0]!;
    expect(summary).toMatchObject({
      sessionId,
      title: created.title,
      workflow: started.workflow,
      mode: started.mode,
      prompt: started.prompt,
      maxIterations: started.maxIterations,
      project: { id: started.project.id, name: started.project.name, baseCommit: started.project.baseCommit },
      agents: {
        coder: { id: "coder-sim", kind: "scripted" },
        reviewer: { id: "reviewer-sim", kind: "scripted" },
        tester: { id: "tester-sim", kind: "scripted" },
      },
      status: "finished",
      state: "approved",
      outcome: final.outcome,
      reason: final.reason,
      iterations: final.iterations,
      unresolved: final.unresolved,
      errorClass: final.errorClass,
      diagnosis: final.diagnosis,
      error: null,
      lineage: null,
      events: { count: events.length, lastVersion: events.at(-1)!.version, inherited: 0 },
    });
    expect(final).toMatchObject({ outcome: "approved", iterations: 2 });
    expect(summary.rounds.map((r) => [r.round, r.dir, r.reason, r.verdicts, r.tests])).toEqual([
      [1, "rounds/01", "initial", ["changes_requested"], { passed: 0, failed: 0 }],
      [2, "rounds/02", "changes_requested", ["approve"], { passed: 1, failed: 0 }],
    ]);
    expect(summary.rounds.map((r) => r.changedFiles)).toEqual([["src/sum.js"], ["src/sum.js"]]);
    expect(summary.rounds.flatMap((r) => r.outputs).map((o) => files.has(o.file))).toEqual(Array(8).fill(true));
    expect(summary.stateEvents).toEqual(jsonl<StateEventLine>("task-events.jsonl"));
    expect(summary.timestamps).toEqual({
      createdAt: events[0]!.recordedAt,
      firstEventAt: events[0]!.recordedAt,
      finishedAt: events.find((e) => e.type === "SessionFinalized")!.recordedAt,
      lastEventAt: events.at(-1)!.recordedAt,
    });
  });

  it("task-events.jsonl has one line per FSM transition, in order, as recorded", () => {
    const lines = jsonl<StateEventLine>("task-events.jsonl");
    const changes = events.filter((e) => e.type === "SessionStateChanged");
    expect(lines).toHaveLength(changes.length);
    expect(lines.map((l) => [l.version, l.from, l.to, l.reason, l.at])).toEqual(
      changes.map((e) => {
        const d = e.data as { from: string; to: string; reason?: string };
        return [e.version, d.from, d.to, d.reason ?? null, e.recordedAt];
      }),
    );
    expect(lines.map((l) => `${l.from}→${l.to}`)).toEqual([
      "start→proposal_coder",
      "proposal_coder→proposal_reviewer",
      "proposal_reviewer→proposal_tester",
      "proposal_tester→awaiting_operator_confirm",
      "awaiting_operator_confirm→building",
      "building→reviewing",
      "reviewing→building",
      "building→reviewing",
      "reviewing→testing",
      "testing→running_tests",
      "running_tests→approved",
    ]);
    expect(lines.find((l) => l.to === "building")!.actor).toBe("user:tester"); // the confirm
  });

  it("task-timeline.json has one payload-free entry per event version, matching the stored timeline", async () => {
    const timeline = json<TimelineLine[]>("task-timeline.json");
    expect(timeline.map((t) => t.version)).toEqual(events.map((e) => e.version));
    expect(timeline.map((t) => t.type)).toEqual(events.map((e) => e.type));
    const stored = await readTimeline(db.pool, sessionId, { limit: 10_000 });
    expect(timeline.map((t) => [t.version, t.type, t.actor, t.summary, t.recordedAt])).toEqual(
      stored.map((s) => [s.version, s.type, s.actor, s.summary, s.recordedAt]),
    );
    for (const entry of timeline)
      expect(Object.keys(entry).sort()).toEqual([
        "actor",
        "actorName",
        "recordedAt",
        "round",
        "state",
        "streamId",
        "summary",
        "type",
        "version",
      ]);
    expect(timeline.at(-1)).toMatchObject({ type: "SessionFinalized", state: "approved", round: 2 });
  });

  it("each round holds its events in full, and the rounds together hold every event once", () => {
    const lines = [1, 2].map((r) => jsonl<{ version: number; type: string; data: unknown; eventId: string }>(`rounds/0${r}/events.jsonl`));
    expect(lines.flat().map((l) => l.version)).toEqual(events.map((e) => e.version));
    for (const line of lines.flat()) {
      const event = events.find((e) => e.version === line.version)!;
      expect(line).toMatchObject({ type: event.type, eventId: event.eventId, data: event.data });
    }
    expect(lines[1]![0]!.type).toBe("IterationStarted");
    expect(lines[1]![0]!.data).toEqual({ iteration: 2, reason: "changes_requested" });
  });

  it("raw outputs equal their blobs byte for byte; parsed JSON and meta equal AgentOutputRecorded", async () => {
    const outputs = events.filter((e) => e.type === "AgentOutputRecorded");
    expect(outputs).toHaveLength(8);
    const metas = [1, 2].map((r) => json<RoundMeta>(`rounds/0${r}/meta.json`));
    const listed = metas.flatMap((m) => m.outputs.map((o) => ({ ...o, dir: m.dir })));
    expect(listed.map((o) => o.version)).toEqual(outputs.map((e) => e.version));
    for (const event of outputs) {
      const d = event.data as {
        stepId: string;
        attempt: number;
        agentId: string;
        simulated: boolean;
        role: string;
        phase: string;
        raw: { blob: string };
        parsed: unknown;
        validationErrors: string[];
        usage?: unknown;
      };
      const meta = listed.find((o) => o.version === event.version)!;
      expect(meta).toMatchObject({
        stepId: d.stepId,
        attempt: d.attempt,
        agentId: d.agentId,
        simulated: d.simulated,
        role: d.role,
        phase: d.phase,
        validationErrors: d.validationErrors,
        raw: d.raw,
        usage: d.usage ?? null,
      });
      const raw = files.get(`${meta.dir}/${meta.file}`)!;
      expect(Buffer.isBuffer(raw)).toBe(true);
      expect(bytes(raw).equals(await blob(d.raw.blob))).toBe(true);
      if (d.parsed === null) {
        expect(meta.parsedFile).toBeNull();
      } else {
        expect(json(`${meta.dir}/${meta.parsedFile}`)).toEqual(d.parsed);
      }
    }
    const verdict = json<{ decision: string; findings: Array<{ message: string }> }>("rounds/01/reviewer-verdict.parsed.json");
    expect(verdict).toMatchObject({ decision: "changes_requested", findings: [{ message: "sum multiplies" }] });
    // Steps of the round, with their attempts as the runner recorded them.
    const scheduled = events.filter((e) => e.type === "StepScheduled").map((e) => (e.data as { stepId: string }).stepId);
    expect(metas.flatMap((m) => m.steps.map((s) => s.stepId))).toEqual(scheduled);
    for (const step of metas.flatMap((m) => m.steps))
      expect(step.attempts).toMatchObject([{ attempt: 1, outcome: "completed", runnerId: expect.any(String) }]);
  });

  it("test-results.json equals the TestCommandRecorded data; changes.diff equals the WorkspaceCommitted diff blob", async () => {
    const rounds = [1, 2].map((r) =>
      events.filter(
        (e) =>
          json<RoundMeta>(`rounds/0${r}/meta.json`).firstVersion <= e.version &&
          e.version <= json<RoundMeta>(`rounds/0${r}/meta.json`).lastVersion,
      ),
    );
    expect(json("rounds/01/test-results.json")).toEqual(ofType(rounds[0]!, "TestCommandRecorded"));
    expect(json("rounds/02/test-results.json")).toEqual(ofType(rounds[1]!, "TestCommandRecorded"));
    expect(json<unknown[]>("rounds/02/test-results.json")).toMatchObject([
      { argv: ["node", "--test", "test/"], passed: true, exitCode: 0 },
    ]);
    for (const [i, round] of rounds.entries()) {
      const commit = ofType<{ diff: { blob: string }; commit: string; changedFiles: unknown[] }>(round, "WorkspaceCommitted");
      expect(commit).toHaveLength(1);
      const diff = files.get(`rounds/0${i + 1}/changes.diff`)!;
      expect(bytes(diff).equals(await blob(commit[0]!.diff.blob))).toBe(true);
      expect(json<RoundMeta>(`rounds/0${i + 1}/meta.json`).commits).toMatchObject([
        { commit: commit[0]!.commit, changedFiles: commit[0]!.changedFiles, diffFile: "changes.diff" },
      ]);
    }
    expect(text("rounds/02/changes.diff")).toContain("+  return a + b;");
  });

  it("the zip unpacks to the same files under a folder named after the session", () => {
    const zip = exportArchive(files);
    const unpacked = unzipSync(new Uint8Array(zip));
    expect(Object.keys(unpacked).sort()).toEqual([...files.keys()].map((f) => `${sessionId}/${f}`).sort());
    for (const [name, content] of files) expect(Buffer.from(unpacked[`${sessionId}/${name}`]!).equals(bytes(content))).toBe(true);
    expect(exportArchive(files).equals(zip)).toBe(true); // deterministic
    expect(() => exportArchive(files, { folder: "../up" })).toThrow(/segment/);
  });

  it("writeExportDir writes every file, refuses a non-empty folder and a name that climbs out", async () => {
    const out = path.join(tempDir("catcafe-export-"), "out");
    const written = await writeExportDir(files, out);
    expect(written).toHaveLength(files.size);
    for (const [name, content] of files) expect(fs.readFileSync(path.join(out, name)).equals(bytes(content))).toBe(true);
    await expect(writeExportDir(files, out)).rejects.toSatisfy((err) => isAppError(err, "PRECONDITION_FAILED"));

    const evilOut = path.join(tempDir("catcafe-export-"), "evil");
    for (const bad of ["../escaped.txt", "rounds/../../escaped.txt", "/etc/passwd", "rounds/.hidden", "a\\b"]) {
      await expect(
        writeExportDir(
          new Map([
            ["summary.json", "{}"],
            [bad, "x"],
          ]),
          evilOut,
        ),
      ).rejects.toSatisfy((err) => isAppError(err, "INVALID_INPUT"));
    }
    expect(fs.existsSync(evilOut)).toBe(false);
    expect(fs.existsSync(path.join(path.dirname(evilOut), "escaped.txt"))).toBe(false);
  });

  it("a rerun (fork) exports its lineage and what it inherited", async () => {
    const child = await rerunTask({ store: db.store, pool: db.pool }, { sessionId }, testActor);
    await h.waitFor(child.sessionId, "rerun awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    const childEvents = await db.store.readStream(child.sessionId);
    const childFiles = await exportSession(db.store, db.pool, child.sessionId);
    const summary = JSON.parse(childFiles.get("summary.json")!.toString()) as SessionSummary;
    const forked = childEvents.find((e) => e.type === "SessionForked")!;
    expect(summary).toMatchObject({
      sessionId: child.sessionId,
      title: (forked.data as { title: string }).title,
      status: "active",
      state: "awaiting_operator_confirm",
      outcome: null,
      lineage: {
        parentId: sessionId,
        forkVersion: 2,
        reason: "rerun",
        chain: [{ sessionId: child.sessionId, parentId: sessionId, forkVersion: 2, reason: "rerun" }],
      },
      events: { count: childEvents.length, inherited: 2 },
      timestamps: { createdAt: forked.recordedAt, firstEventAt: childEvents[0]!.recordedAt },
    });
    const timeline = JSON.parse(childFiles.get("task-timeline.json")!.toString()) as TimelineLine[];
    expect(timeline.map((t) => [t.version, t.streamId])).toEqual(childEvents.map((e) => [e.version, e.streamId]));
    expect(timeline.slice(0, 2).map((t) => t.streamId)).toEqual([sessionId, sessionId]);
    expect([...childFiles.keys()].filter((f) => f.startsWith("rounds/")).sort()).toEqual(
      ["coder-discussion.txt", "events.jsonl", "meta.json", "reviewer-discussion.txt", "test-results.json", "tester-discussion.txt"].map(
        (f) => `rounds/01/${f}`,
      ),
    );
    expect(exportArchive(childFiles).length).toBeGreaterThan(0);
  });

  it("repeats of a role and phase in one round get distinct names (pure renderer, synthetic events)", async () => {
    const meta = { actor: { kind: "runner" as const, id: "r1" }, correlationId: "c", causationId: null, schemaVersion: 1 };
    const base = { position: 0, txId: 0, streamId: "s-rep", metadata: meta, recordedAt: new Date().toISOString() };
    const stepId = "00000000-0000-4000-8000-000000000001";
    const output = (n: number) => ({
      ...base,
      eventId: `o${n}`,
      version: 1 + n * 2,
      type: "AgentOutputRecorded",
      data: {
        stepId,
        attempt: n,
        role: "coder",
        agentId: "c",
        phase: "build",
        raw: { blob: `${n}`.repeat(64), size: 1, mediaType: "text/plain" },
        preview: "",
        parsed: null,
        validationErrors: [],
        simulated: true,
      },
    });
    const commit = (n: number) => ({
      ...base,
      eventId: `w${n}`,
      version: 2 + n * 2,
      type: "WorkspaceCommitted",
      data: {
        stepId,
        commit: `${n}`.repeat(40),
        parent: "0".repeat(40),
        empty: false,
        changedFiles: [{ path: "a", status: "modified" }],
        diff: { blob: `d${n}`, size: 1, mediaType: "text/x-diff" },
      },
    });
    const out = await renderSessionExport("s-rep", [output(1), commit(1), output(2), commit(2)], async (hash) =>
      Buffer.from(`content of ${hash}`),
    );
    expect([...out.keys()].filter((k) => k.startsWith("rounds/01/")).sort()).toEqual(
      ["changes-2.diff", "changes.diff", "coder-build-2.txt", "coder-build.txt", "events.jsonl", "meta.json", "test-results.json"].map(
        (f) => `rounds/01/${f}`,
      ),
    );
    expect(out.get("rounds/01/coder-build-2.txt")!.toString()).toBe(`content of ${"2".repeat(64)}`);
    expect(out.get("rounds/01/changes-2.diff")!.toString()).toBe("content of d2");
  });

  it("a viewer's export holds no repository path, allowlist or agent configuration; a member's does", async () => {
    const all = (f: ExportFiles) => [...f.values()].map((c) => bytes(c).toString("utf8")).join("\n");
    const member = all(await exportSession(db.store, db.pool, sessionId, { audience: "member" }));
    const viewer = all(await exportSession(db.store, db.pool, sessionId, { audience: "viewer" }));
    const started = ofType<{ project: { repoPath: string } }>(events, "TaskStarted")[0]!;
    // The repository's path, the allowlist's rule, the scripted agents' configuration.
    for (const detail of [started.project.repoPath, '"--test","**"', '"responses"']) {
      expect(member, detail).toContain(detail);
      expect(viewer, detail).not.toContain(detail);
    }
    expect(viewer).toContain(HIDDEN_FOR_VIEWERS);
    // What a reader needs is still there: the agents by id and kind, the prompt, the verdicts.
    const viewerFiles = await exportSession(db.store, db.pool, sessionId, { audience: "viewer" });
    const summary = JSON.parse(bytes(viewerFiles.get("summary.json")!).toString()) as {
      agents: Record<string, { id: string; kind: string }>;
    };
    expect(summary.agents.coder).toMatchObject({ kind: "scripted" });
    expect(viewerFiles.size).toBe(files.size);
  });

  it("never writes a command agent's literal env values, and refuses a session with no events", async () => {
    const at = new Date().toISOString();
    const meta = { actor: { kind: "user" as const, id: "u1" }, correlationId: "c", causationId: null, schemaVersion: 1 };
    const base = { position: 0, txId: 0, streamId: "s-env", metadata: meta, recordedAt: at };
    const agent = { kind: "command", id: "cmd", argv: ["agent"], env: { API_TOKEN: "sekrit-value" }, passEnv: ["OPENAI_API_KEY"] };
    const synthetic: RecordedEvent[] = [
      { ...base, eventId: "e1", version: 1, type: "SessionCreated", data: { title: "env", workflow: "review_loop", state: "start" } },
      {
        ...base,
        eventId: "e2",
        version: 2,
        type: "TaskStarted",
        data: {
          workflow: "review_loop",
          workflowVersion: 1,
          mode: "implementation",
          prompt: "p",
          maxIterations: 3,
          project: { id: "p", name: "P", repoPath: "/r", baseCommit: "a".repeat(40), allowlist: [] },
          agents: { coder: agent },
        },
      },
      {
        ...base,
        eventId: "e3",
        version: 3,
        type: "StepScheduled",
        data: {
          stepId: "00000000-0000-4000-8000-000000000000",
          kind: "agent",
          input: { state: "building", role: "coder", agent },
          timeoutMs: 1000,
          maxAttempts: 1,
        },
      },
    ];
    const out = await renderSessionExport("s-env", synthetic, async () => Buffer.from(""));
    for (const content of out.values()) expect(content.toString()).not.toContain("sekrit-value");
    expect(out.get("rounds/01/events.jsonl")!.toString()).toContain("OPENAI_API_KEY");
    await expect(renderSessionExport("s-none", [], async () => Buffer.from(""))).rejects.toSatisfy((err) => isAppError(err, "NOT_FOUND"));
    await expect(exportSession(db.store, db.pool, "s-missing")).rejects.toSatisfy((err) => isAppError(err, "NOT_FOUND"));
  });
});
