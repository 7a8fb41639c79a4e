// HTTP brains act in every workflow (docs/forge.md "Who can act in a stage"): a local
// OpenAI-compatible stub plays the planner, the coder and the critic of a Forge through the
// real runner, from the idea to delivery, writing files by its one JSON reply
// (server/runner/files-reply.ts); a reply writing outside its stage is refused and recorded;
// a reply that breaks the format is retried, then fails the stage with the problem named;
// and a brain codes in the review loop.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBlob } from "../../server/events/blobs";
import { ARTIFACT_PATHS as A } from "../../server/forge/artifacts";
import {
  FORGE_CODE_FILES,
  FORGE_CRITIQUES,
  FORGE_DELIVERY_MD,
  FORGE_DEMO_IDEA,
  FORGE_DESIGN_JSON,
  FORGE_DESIGN_MD,
  FORGE_FEATURES,
  FORGE_IDEA_MD,
  FORGE_PLAN,
  FORGE_PRD_MD,
  FORGE_REQUIREMENTS,
} from "../../server/demo/forge-content";
import { choose, forgeStatus, newForge } from "../../server/tasks/forge";
import { startTask } from "../../server/tasks/commands";
import { startBrainStub, startEventStream, streamOf, stubAccess, writeStream, type BrainStub } from "../helpers/brains-stub";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, gitIn, ofType, reviewApprove, testPlan, type Harness, type Script } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let stub: BrainStub;
const deps = () => ({ store: db.store, pool: db.pool });

type Role = "planner" | "coder" | "reviewer";
/** What a project's brain answers for a role at a stage (null: no stage), given its prompt. */
type Answer = (stage: string | null, prompt: string) => string;
/** Each project's brains, by role: the stub tells them apart by the model they ask for (`<project>/<role>`). */
const answers = new Map<string, Answer>();
/** What each brain was asked: its prompt, by model. */
const asked: Array<{ model: string; prompt: string }> = [];

const filesReply = (files: Record<string, string>, summary = "Wrote the files.") =>
  JSON.stringify({ files: Object.entries(files).map(([path, content]) => ({ path, content })), summary });

/** The demo's pipeline as brains answer it: each stage's files in the one reply, each critic passing. */
const DEMO_FILES: Record<string, Record<string, string>> = {
  idea: { [A.idea]: FORGE_IDEA_MD },
  prd: { [A.prd]: FORGE_PRD_MD, [A.requirements]: FORGE_REQUIREMENTS, [A.features]: FORGE_FEATURES },
  design: { [A.design]: FORGE_DESIGN_MD, [A.designSpec]: FORGE_DESIGN_JSON },
  plan: { [A.plan]: FORGE_PLAN },
  coding: FORGE_CODE_FILES,
  delivery: { [A.deliveryReport]: FORGE_DELIVERY_MD },
};
const PASSES: Record<string, string> = {
  prd: FORGE_CRITIQUES.prdPass,
  design: FORGE_CRITIQUES.designPass,
  plan: FORGE_CRITIQUES.planPass,
  coding: FORGE_CRITIQUES.codingPass,
};
const demoAnswer =
  (role: Role): Answer =>
  (stage) => {
    if (!stage) throw new Error(`the ${role} was asked outside any stage`);
    return role === "reviewer" ? PASSES[stage]! : filesReply(DEMO_FILES[stage]!, `The ${stage} stage's files.`);
  };

beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
  stub = await startBrainStub(async (req, res) => {
    const body = JSON.parse(req.body) as { model: string; messages: Array<{ role: string; content: string }> };
    const prompt = body.messages.at(-1)!.content;
    asked.push({ model: body.model, prompt });
    const answer = answers.get(body.model);
    if (!answer) throw new Error(`no brain answers as ${body.model}`);
    const stage = /^Stage: (\w+) \(/m.exec(prompt)?.[1] ?? null;
    startEventStream(res);
    // In pieces, as a model streams: the runner reads the reply whole.
    const text = answer(stage, prompt);
    await writeStream(res, streamOf("openai", [text.slice(0, 40), text.slice(40)]), { pieceBytes: 500 });
  });
});
afterAll(async () => {
  await stub?.close();
});

/**
 * A project whose roles are brains on the stub (answering as `roles` says), the others scripted
 * (`scripted`; a tester planning the unit tests by default); its settings allow the stub's host.
 */
async function brainProject(
  id: string,
  roles: Partial<Record<Role, Answer>>,
  { settings = {}, scripted = {} }: { settings?: Record<string, unknown>; scripted?: Record<string, Script> } = {},
) {
  const agents: Record<string, Record<string, unknown> | Script> = { tester: [{ reply: testPlan() }], ...scripted };
  for (const [role, answer] of Object.entries(roles) as Array<[Role, Answer]>) {
    const model = `${id}/${role}`;
    answers.set(model, answer);
    agents[role] = { kind: "openai", id: `${role}-brain`, baseUrl: stub.url, model, rateLimit: { minIntervalMs: 0 } };
  }
  return h.project(id, agents, { settings: { ...stubAccess, ...settings } });
}

const events = (sessionId: string) => db.store.readStream(sessionId);
const headOf = async (sessionId: string) => ((await h.state(sessionId)) as { head: string }).head;
const blobText = async (ref: { blob: string }) => (await getBlob(db.pool, ref.blob)).content.toString("utf8");

describe("brains as a Forge's planner, coder and critic", () => {
  it(
    "run from the idea to delivery: each stage's files recorded as the brain wrote them, the code committed and checked",
    { timeout: 120_000 },
    async () => {
      const projectId = await brainProject("brains-forge", {
        planner: demoAnswer("planner"),
        coder: demoAnswer("coder"),
        reviewer: demoAnswer("reviewer"),
      });
      const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [] }, testActor);
      const done = await h.waitFor(sessionId, "the end", (s) => s.status === "finished" || s.fsm === "agent_failed", 90_000);
      const log = await events(sessionId);
      expect(done.outcome, JSON.stringify(ofType(log, "PersonNeeded"))).toBe("completed");
      expect(ofType<{ stage: string }>(log, "StageCompleted").map((d) => d.stage)).toEqual([
        "idea",
        "prd",
        "design",
        "plan",
        "coding",
        "check",
        "delivery",
      ]);
      // Every artifact recorded once, with the brain's own text, without a problem.
      const recorded = ofType<{ path: string; stage: string; blob: { blob: string }; problems: string[] }>(log, "ArtifactRecorded");
      const expected = Object.entries(DEMO_FILES).flatMap(([stage, files]) =>
        Object.entries(files)
          .filter(([path]) => path.startsWith(".forge/"))
          .map(([path, text]) => ({ stage, path, text })),
      );
      expect(recorded.map((r) => `${r.stage} ${r.path}`).sort()).toEqual(expected.map((e) => `${e.stage} ${e.path}`).sort());
      for (const e of expected) {
        const r = recorded.find((x) => x.path === e.path)!;
        expect(await blobText(r.blob), e.path).toBe(e.text);
        expect(r.problems, e.path).toEqual([]);
      }
      expect(forgeStatus(sessionId, log).status).toBe("Completed");
      // The code is the coder brain's, committed at the session's head, and Check ran its test for real.
      const head = await headOf(sessionId);
      for (const [path, text] of Object.entries(FORGE_CODE_FILES)) expect(gitIn(h.repo, "show", `${head}:${path}`), path).toBe(text.trim());
      expect(ofType<{ argv: string[]; passed: boolean }>(log, "TestCommandRecorded")).toEqual([
        expect.objectContaining({ argv: ["node", "--test", "test/count.test.js"], passed: true }),
      ]);
      // Each actor was told the format and its stage's files; a critic was not, and read the artifacts in its prompt.
      const prompts = (role: Role) => asked.filter((a) => a.model === `${projectId}/${role}`).map((a) => a.prompt);
      expect(prompts("planner")).toHaveLength(5);
      expect(prompts("planner")[0]).toContain("How to write files: you cannot write them yourself.");
      expect(prompts("planner")[0]).toContain(`- Write: ${A.idea}.`);
      expect(prompts("coder")[0]).toContain(`- Write: ${A.codeMetadata}.`);
      expect(prompts("coder")[0]).toContain(`- You may write only paths matching: ** !.forge/** ${A.codeMetadata} (gitignore-style`);
      expect(prompts("reviewer")).toHaveLength(4);
      for (const p of prompts("reviewer")) expect(p).not.toContain("How to write files");
      expect(prompts("reviewer")[0]).toContain(`--- ${A.prd} ---\n${FORGE_PRD_MD}`);
    },
  );

  it("a reply writing outside its stage: refused and recorded, not committed; the stage's own files land", async () => {
    const projectId = await brainProject("brains-outside", {
      planner: (stage, prompt) =>
        stage === "prd"
          ? filesReply({ ...DEMO_FILES.prd!, "src/sneaky.js": "module.exports = 1;\n", [A.plan]: "{}" })
          : demoAnswer("planner")(stage, prompt),
      coder: demoAnswer("coder"),
      reviewer: demoAnswer("reviewer"),
    });
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
    await h.waitFor(sessionId, "the PRD gate", (s) => s.fsm === "prd_review");
    const log = await events(sessionId);
    expect(ofType(log, "ArtifactWriteRefused")).toEqual([
      expect.objectContaining({ by: "agent", stage: "prd", paths: expect.arrayContaining(["src/sneaky.js", A.plan]) }),
    ]);
    const tree = gitIn(h.repo, "ls-tree", "-r", "--name-only", await headOf(sessionId)).split("\n");
    expect(tree).not.toContain("src/sneaky.js");
    expect(tree).not.toContain(A.plan);
    expect(tree).toEqual(expect.arrayContaining([A.idea, A.prd, A.requirements, A.features]));
    expect(ofType<{ path: string }>(log, "ArtifactRecorded").map((r) => r.path)).not.toContain(A.plan);
  });

  it("a reply that breaks the format is retried, then the stage fails with the problem named and a person is asked", async () => {
    let calls = 0;
    const projectId = await brainProject(
      "brains-malformed",
      {
        // The idea as prose first, then a path that is no string.
        planner: () => (++calls === 1 ? FORGE_IDEA_MD : JSON.stringify({ files: [{ path: 7, content: FORGE_IDEA_MD }] })),
        coder: demoAnswer("coder"),
        reviewer: demoAnswer("reviewer"),
      },
      { settings: { retry: { maxAttempts: 2, backoffMs: [20] } } },
    );
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [] }, testActor);
    await h.waitFor(sessionId, "a person's choice", (s) => s.fsm === "agent_failed");
    const log = await events(sessionId);
    expect(ofType<{ attempt: number }>(log, "StepStarted").map((d) => d.attempt)).toEqual([1, 2]);
    // Each attempt's problem named: the first retried, the second the last.
    expect(ofType<{ attempt: number; errorClass: string; message: string; retryAt: string | null }>(log, "StepFailed")).toEqual([
      expect.objectContaining({
        attempt: 1,
        errorClass: "schema_invalid",
        message: expect.stringContaining("the files reply of planner-brain is invalid: not valid JSON"),
        retryAt: expect.any(String),
      }),
      expect.objectContaining({
        attempt: 2,
        errorClass: "schema_invalid",
        message: expect.stringContaining("the files reply of planner-brain is invalid: files.0.path: Invalid input: expected string"),
        retryAt: null,
      }),
    ]);
    expect(ofType(log, "PersonNeeded")).toEqual([
      expect.objectContaining({
        cause: "agent_failed",
        errorClass: "schema_invalid",
        resume: "idea_draft",
        message: expect.stringContaining("files.0.path: Invalid input: expected string, received number"),
      }),
    ]);
    expect(ofType(log, "ArtifactRecorded")).toEqual([]);
    // Abort keeps the named problem as the session's diagnosis.
    await choose(deps(), { sessionId, choice: "abort" }, testActor);
    expect((await h.waitFor(sessionId, "the end", (s) => s.status === "finished")).outcome).toBe("failed");
    expect(ofType(await events(sessionId), "SessionFinalized")).toEqual([
      expect.objectContaining({
        outcome: "failed",
        errorClass: "schema_invalid",
        diagnosis: expect.stringContaining("files.0.path: Invalid input: expected string, received number"),
      }),
    ]);
  });
});

describe("a brain as the coder of the review loop", () => {
  it("its files reply is written and committed as a CLI's edits would be; the tests pass and the session is approved", async () => {
    const projectId = await brainProject(
      "brains-coder",
      {
        coder: (stage, prompt) => {
          expect(stage).toBeNull();
          expect(prompt).toContain("How to write files: you cannot write them yourself.");
          return filesReply({ "src/sum.js": FIXED_SUM }, "sum() adds");
        },
      },
      { scripted: { reviewer: [{ reply: reviewApprove }] } },
    );
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    const done = await h.waitFor(sessionId, "the session to finish", (s) => s.status === "finished", 60_000);
    expect(done.outcome).toBe("approved");
    const log = await events(sessionId);
    const commits = ofType<{ changedFiles: Array<{ path: string }> }>(log, "WorkspaceCommitted");
    expect(commits[0]!.changedFiles.map((f) => f.path)).toEqual(["src/sum.js"]);
    const head = await headOf(sessionId);
    expect(gitIn(h.repo, "show", `${head}:src/sum.js`)).toBe(FIXED_SUM.trim());
    expect(gitIn(h.repo, "log", "-1", "--format=%s", head)).toContain("sum() adds");
    expect(ofType<{ passed: boolean }>(log, "TestCommandRecorded").every((t) => t.passed)).toBe(true);
  });
});
