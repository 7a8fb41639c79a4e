// The Forge pipeline (req F1–F14) end to end through the real runner on a real database:
// the demo idea to Delivery with the simulated agents, a person's edit kept byte for byte
// through the next draft, feedback in the actor's next prompt, an oscillating critic
// stopped at its third critique, writes outside a stage refused, an agent that fails
// three times waiting for a person's choice, and a budget of one call.
import { beforeAll, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../server/events/types";
import { ARTIFACT_PATHS as A } from "../../server/forge/artifacts";
import { artifactText, choose, editArtifact, forgeStatus, giveFeedback, newForge, passGate } from "../../server/tasks/forge";
import { FORGE_CODE_FILES, FORGE_DEMO_IDEA, FORGE_PRD_MD, FORGE_REQUIREMENTS } from "../../server/demo/forge-content";
import { startTask } from "../../server/tasks/commands";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { forgeAgents, quickForgeScripts, type ForgeScripts } from "../helpers/forge";
import { createHarness, gitIn, ofType, type Harness, type TaskView } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
const deps = () => ({ store: db.store, pool: db.pool });
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
});

/** A project whose agents answer by stage (the demo's scripts unless `change` says otherwise). */
async function forgeProject(id: string, change: (s: ForgeScripts) => ForgeScripts = (s) => s, extra: Record<string, unknown> = {}) {
  return h.project(id, forgeAgents(change(quickForgeScripts())), extra);
}

const atState = (fsm: string) => (s: TaskView) => s.fsm === fsm;
const events = (sessionId: string) => db.store.readStream(sessionId);
const transitions = (log: RecordedEvent[]) =>
  ofType<{ from: string; to: string }>(log, "SessionStateChanged").map((d) => `${d.from}→${d.to}`);
const promptsOf = (log: RecordedEvent[], state: string) =>
  ofType<{ input: { state: string; prompt: string } }>(log, "StepScheduled")
    .filter((d) => d.input.state === state)
    .map((d) => d.input.prompt);

describe("the demo idea to Delivery with the simulated agents", () => {
  it("runs all seven stages: one critic rejection, a person's gate, code whose test really passes", { timeout: 120_000 }, async () => {
    const projectId = await forgeProject("forge-demo");
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
    await h.waitFor(sessionId, "the PRD gate", atState("prd_review"));
    let status = forgeStatus(sessionId, await events(sessionId));
    expect(status.status).toBe("InProgress");
    expect(status.waiting).toMatchObject({ stage: "prd", kind: "gate", actions: ["edit", "feedback", "pass", "abort"] });
    expect(status.stages.find((s) => s.name === "idea")).toMatchObject({ state: "completed" });
    await passGate(deps(), { sessionId }, testActor);
    // The critic (and the rules) reject the monitoring requirement; the redraft comes back to the gate.
    await h.waitFor(
      sessionId,
      "the PRD gate again",
      (s) => s.fsm === "prd_review" && s.status === "active" && (s as { iteration: number }).iteration === 2,
    );
    await passGate(deps(), { sessionId }, testActor);
    const done = await h.waitFor(sessionId, "completed", (s) => s.status === "finished", 60_000);
    expect(done.outcome).toBe("completed");
    const log = await events(sessionId);
    expect(transitions(log)).toEqual([
      "start→idea_draft",
      "idea_draft→prd_draft",
      "prd_draft→prd_review",
      "prd_review→prd_critic",
      "prd_critic→prd_draft",
      "prd_draft→prd_review",
      "prd_review→prd_critic",
      "prd_critic→design_draft",
      "design_draft→design_critic",
      "design_critic→plan_draft",
      "plan_draft→plan_critic",
      "plan_critic→coding_draft",
      "coding_draft→coding_critic",
      "coding_critic→check_run",
      "check_run→delivery_draft",
      "delivery_draft→completed",
    ]);
    const critiques = ofType<{ stage: string; decision: string; findings: Array<{ id: string; source: string }> }>(log, "CritiqueRecorded");
    expect(critiques[0]).toMatchObject({ stage: "prd", decision: "revise" });
    expect(critiques[0]!.findings.map((f) => f.id)).toEqual(expect.arrayContaining(["prd-monitoring", "rule:prd.non-core.R5"]));
    expect(critiques.slice(1).every((c) => c.decision === "pass")).toBe(true);
    // Check ran the coder's own test for real.
    expect(ofType<{ argv: string[]; passed: boolean; stdoutTail: string }>(log, "TestCommandRecorded")).toEqual([
      expect.objectContaining({
        argv: ["node", "--test", "test/count.test.js"],
        passed: true,
        stdoutTail: expect.stringContaining("pass 3"),
      }),
    ]);
    expect(ofType<{ stage: string }>(log, "StageCompleted").map((d) => d.stage)).toEqual([
      "idea",
      "prd",
      "design",
      "plan",
      "coding",
      "check",
      "delivery",
    ]);
    status = forgeStatus(sessionId, log);
    expect(status.status).toBe("Completed");
    expect(status.artifacts.map((a) => a.path).sort()).toEqual(
      [A.idea, A.prd, A.requirements, A.features, A.design, A.designSpec, A.plan, A.codeMetadata, A.deliveryReport].sort(),
    );
    expect(status.artifacts.every((a) => a.immutable && a.problems.length === 0)).toBe(true);
    expect(status.progress).toEqual([
      { id: "F1", status: "done", tasks: 2, done: 2 },
      { id: "F2", status: "done", tasks: 3, done: 3 },
    ]);
    // The artifacts are files in the session's worktree, at the session's head.
    const head = (await h.state(sessionId)) as { head: string };
    expect(gitIn(h.repo, "show", `${head.head}:.forge/requirements.json`)).toBe(FORGE_REQUIREMENTS.trim());
    expect(gitIn(h.repo, "show", `${head.head}:src/count.js`)).toBe(FORGE_CODE_FILES["src/count.js"].trim());
    const history = JSON.parse(gitIn(h.repo, "show", `${head.head}:.forge/feedback_history.json`)) as Array<{ source: string }>;
    expect(history.map((f) => f.source)).toContain("critic");
    const prd = status.artifacts.find((a) => a.path === A.prd)!;
    expect(prd.versions.map((v) => v.kind)).toEqual(["draft", "draft"]);
    expect((await artifactText(deps(), log, prd.hash)).text).toBe(FORGE_PRD_MD);
  });
});

const TITLE = "# PRD: wc, a word counter (keep GNU wc's output format: lines, words, characters, file name)";

describe("a person's part at a gate", () => {
  it("an edit survives the next draft byte for byte, and the feedback reaches the actor's next prompt", async () => {
    const projectId = await forgeProject("forge-edit");
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
    await h.waitFor(sessionId, "the PRD gate", atState("prd_review"));
    const prd = forgeStatus(sessionId, await events(sessionId)).artifacts.find((a) => a.path === A.prd)!;
    const drafted = (await artifactText(deps(), await events(sessionId), prd.hash)).text;
    // The person rewrites the title; the redraft rewrites other lines (changes that touch
    // or overlap the person's are held back: see the next test).
    const edited = drafted.replace(/^.*\n/, `${TITLE}\n`);
    await editArtifact(deps(), { sessionId, path: A.prd, content: edited, baseHash: prd.hash }, testActor);
    // An edit made on a version that is no longer current is stale.
    await expect(editArtifact(deps(), { sessionId, path: A.prd, content: "x", baseHash: prd.hash }, testActor)).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("stale edit"),
    });
    const feedback = "Drop the monitoring requirement: nobody asked for it.";
    await giveFeedback(deps(), { sessionId, text: feedback }, testActor);
    await h.waitFor(sessionId, "the redraft at the gate", (s) => s.fsm === "prd_review" && (s as { iteration: number }).iteration === 2);
    const log = await events(sessionId);
    // The actor's next prompt carries the person's feedback and says the person's text is to be kept.
    const [, second] = promptsOf(log, "prd_draft");
    expect(second).toContain(feedback);
    expect(second).toContain(`A person edited ${A.prd}`);
    // The redraft rewrote the PRD (monitoring gone) and the person's note is still there, byte for byte.
    const now = forgeStatus(sessionId, log).artifacts.find((a) => a.path === A.prd)!;
    const text = (await artifactText(deps(), log, now.hash)).text;
    expect(text).toBe(FORGE_PRD_MD.replace(/^.*\n/, `${TITLE}\n`));
    expect(now.held).toBeNull();
    expect(ofType(log, "ArtifactEdited")).toEqual([expect.objectContaining({ path: A.prd, baseHash: prd.hash, stage: "prd" })]);
    expect(ofType<{ source: string; text: string }>(log, "FeedbackGiven")).toEqual([
      expect.objectContaining({ source: "person", text: feedback }),
    ]);
  });

  it("a redraft that rewrites the person's own lines is held back: the person's text stays, the difference waits", async () => {
    const projectId = await forgeProject("forge-conflict");
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
    await h.waitFor(sessionId, "the PRD gate", atState("prd_review"));
    const prd = forgeStatus(sessionId, await events(sessionId)).artifacts.find((a) => a.path === A.prd)!;
    const drafted = (await artifactText(deps(), await events(sessionId), prd.hash)).text;
    // The person rewrites the very line the agent's redraft rewrites too.
    const lines = drafted.split("\n");
    lines[2] = "Count lines, words and characters of one file. (Worded by a person.)";
    const edited = lines.join("\n");
    await editArtifact(deps(), { sessionId, path: A.prd, content: edited, baseHash: prd.hash }, testActor);
    await giveFeedback(deps(), { sessionId, text: "Remove the monitoring requirement." }, testActor);
    await h.waitFor(sessionId, "the redraft at the gate", (s) => s.fsm === "prd_review" && (s as { iteration: number }).iteration === 2);
    const log = await events(sessionId);
    const now = forgeStatus(sessionId, log).artifacts.find((a) => a.path === A.prd)!;
    const text = (await artifactText(deps(), log, now.hash)).text;
    expect(text).toContain("(Worded by a person.)");
    expect(now.held).toMatchObject({ conflicts: 1 });
    expect((await artifactText(deps(), log, now.held!.hash)).text).toBe(FORGE_PRD_MD);
    // Accepting the agent's version is an edit like any other, and lets go of the person's
    // earlier edit: the next redraft no longer protects it.
    await editArtifact(deps(), { sessionId, path: A.prd, content: FORGE_PRD_MD, baseHash: now.hash }, testActor);
    expect(forgeStatus(sessionId, await events(sessionId)).artifacts.find((a) => a.path === A.prd)!.held).toBeNull();
    expect(((await h.state(sessionId)) as { pipeline: { edits: Record<string, unknown[]> } }).pipeline.edits[A.prd]).toEqual([]);
  });

  it("Idea's gate takes edits only; a completed stage's artifacts are immutable, and the refused write is recorded", async () => {
    const projectId = await forgeProject("forge-idea-gate");
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["idea", "prd"] }, testActor);
    await h.waitFor(sessionId, "the idea gate", atState("idea_review"));
    await expect(giveFeedback(deps(), { sessionId, text: "more" }, testActor)).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("edits only"),
    });
    await passGate(deps(), { sessionId }, testActor);
    await h.waitFor(sessionId, "the PRD gate", atState("prd_review"));
    const idea = forgeStatus(sessionId, await events(sessionId)).artifacts.find((a) => a.path === A.idea)!;
    expect(idea.immutable).toBe(true);
    const before = (await events(sessionId)).length;
    await expect(
      editArtifact(deps(), { sessionId, path: A.idea, content: "changed", baseHash: idea.hash }, testActor),
    ).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("immutable"),
    });
    const log = await events(sessionId);
    expect(log).toHaveLength(before + 1);
    expect(log.at(-1)).toMatchObject({ type: "ArtifactWriteRefused", data: { by: "person", paths: [A.idea], stage: "idea" } });
    expect(forgeStatus(sessionId, log).artifacts.find((a) => a.path === A.idea)!.hash).toBe(idea.hash);
  });
});

describe("gates as docs/forge.md says", () => {
  it("a pipeline started as New task starts it (tasks.start, no gates given) has the gates of idea, PRD, design and plan, none on coding", async () => {
    const projectId = await forgeProject("forge-ui-gates");
    const { sessionId } = await startTask(
      deps(),
      { projectId, prompt: FORGE_DEMO_IDEA, workflow: "forge", mode: "new", title: "From New task" },
      testActor,
    );
    await h.waitFor(sessionId, "the idea gate", atState("idea_review"));
    const status = forgeStatus(sessionId, await events(sessionId));
    expect(status.stages.filter((s) => s.gate).map((s) => s.name)).toEqual(["idea", "prd", "design", "plan"]);
    expect(status.stages.find((s) => s.name === "coding")).toMatchObject({ gate: false });
  });

  it("gates given leave out the others (the demo's: the PRD's only)", async () => {
    const projectId = await forgeProject("forge-prd-gate");
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
    await h.waitFor(sessionId, "the PRD gate", atState("prd_review"));
    const status = forgeStatus(sessionId, await events(sessionId));
    expect(status.stages.filter((s) => s.gate).map((s) => s.name)).toEqual(["prd"]);
  });
});

describe("the runner enforces each stage's paths", () => {
  it("a PRD actor's writes to src/ and to the plan are undone and recorded; its own artifacts land", async () => {
    const projectId = await forgeProject("forge-paths", (s) => {
      const prd = s.planner.prd!;
      prd[0] = {
        ...prd[1]!,
        files: { ...(prd[1]!.files as Record<string, string>), "src/sneaky.js": "module.exports = 1;\n", [A.plan]: "{}" },
      };
      return s;
    });
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
    await h.waitFor(sessionId, "the PRD gate", atState("prd_review"));
    const log = await events(sessionId);
    expect(ofType(log, "ArtifactWriteRefused")).toEqual([
      expect.objectContaining({ by: "agent", stage: "prd", paths: expect.arrayContaining(["src/sneaky.js", A.plan]) }),
    ]);
    const head = ((await h.state(sessionId)) as { head: string }).head;
    const tree = gitIn(h.repo, "ls-tree", "-r", "--name-only", head).split("\n");
    expect(tree).not.toContain("src/sneaky.js");
    expect(tree).not.toContain(A.plan);
    expect(tree).toEqual(expect.arrayContaining([A.prd, A.requirements, A.features]));
  });
});

describe("the anti-loop", () => {
  const A_FINDING = { id: "prd-scope", severity: "blocking", message: "The PRD's scope is too wide: cut the command-line options." };
  const B_FINDING = { id: "prd-errors", severity: "blocking", message: "Error handling for unreadable files is not specified anywhere." };
  const say = (summary: string, findings: unknown[]) => ({ reply: JSON.stringify({ decision: "revise", summary, findings }) });

  it("an A → B → A critic stops for a person at its third critique, before the cap, though the texts are not alike", async () => {
    const projectId = await forgeProject("forge-oscillate", (s) => {
      s.reviewer.prd = [say("Too wide.", [A_FINDING]), say("Errors missing.", [B_FINDING]), say("Too wide again.", [A_FINDING])];
      return s;
    });
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [], caps: { prd: 5 } }, testActor);
    await h.waitFor(sessionId, "the stop", atState("prd_stopped"));
    const log = await events(sessionId);
    const critiques = ofType<{
      round: number;
      decision: string;
      loop: { similarity: number | null; reopened: string[]; escalate: string | null };
    }>(log, "CritiqueRecorded");
    expect(critiques.map((c) => c.decision)).toEqual(["revise", "revise", "escalate"]);
    expect(critiques[2]!.loop.reopened).toEqual(["prd-scope"]);
    // The seed's 80 % rule alone would not have stopped it.
    expect(critiques[2]!.loop.similarity!).toBeLessThan(0.8);
    expect(ofType(log, "PersonNeeded")).toEqual([
      expect.objectContaining({ cause: "loop", stage: "prd", message: expect.stringContaining("prd-scope") }),
    ]);
    const status = forgeStatus(sessionId, log);
    expect(status.waiting).toMatchObject({ kind: "stopped", stage: "prd", actions: ["edit", "feedback", "pass", "abort"] });
    expect(status.stages.find((s) => s.name === "prd")).toMatchObject({ state: "stopped", iteration: 3, cap: 5 });
    // A person can override the critic and go on.
    await passGate(deps(), { sessionId }, testActor);
    await h.waitFor(sessionId, "design", (s) => s.fsm.startsWith("design") || s.fsm.startsWith("plan") || s.status === "finished");
  });
});

describe("resilience: an agent that keeps failing waits for a person's choice", () => {
  const FAULT = { fault: "server_error", message: "HTTP 503 Service Unavailable (simulated)" };
  const IDEA_REPLY = { reply: "Wrote the idea down.", files: { [A.idea]: "# Idea\n\nA word counter.\n" } };
  /** The planner script without its idea: the idea comes from its `responses` (by invocation). */
  const withoutIdea = (s: ForgeScripts) => {
    const { idea: _idea, ...others } = s.planner;
    s.planner = others;
    return s;
  };
  /** The planner fails `failures` times on the idea, then writes it. */
  async function failingProject(id: string, failures: number) {
    const projectId = await forgeProject(id, withoutIdea, { settings: { retry: { maxAttempts: 4, backoffMs: [20] } } });
    const agents = (
      await db.pool.query<{ agents: Record<string, Record<string, unknown>> }>("SELECT agents FROM projects WHERE id = $1", [projectId])
    ).rows[0]!.agents;
    agents.planner!.responses = [...Array.from({ length: failures }, () => FAULT), IDEA_REPLY];
    await db.pool.query("UPDATE projects SET agents = $2 WHERE id = $1", [projectId, JSON.stringify(agents)]);
    return projectId;
  }
  const scheduledIdeaSteps = (log: RecordedEvent[]) => promptsOf(log, "idea_draft").length;

  it("after 1 + 3 retries the session waits; retry runs the stage again and the pipeline goes on", async () => {
    const projectId = await failingProject("forge-retry", 4);
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [] }, testActor);
    await h.waitFor(sessionId, "a person's choice", atState("agent_failed"));
    let log = await events(sessionId);
    expect(ofType<{ attempt: number }>(log, "StepStarted").map((d) => d.attempt)).toEqual([1, 2, 3, 4]);
    expect(ofType(log, "PersonNeeded")).toEqual([
      expect.objectContaining({
        cause: "agent_failed",
        errorClass: "provider_network_error",
        resume: "idea_draft",
        message: expect.stringContaining("503"),
      }),
    ]);
    expect(forgeStatus(sessionId, log)).toMatchObject({
      status: "InProgress",
      waiting: { kind: "agent_failed", actions: ["retry", "guidance", "abort"] },
    });
    // Nothing to pass here, and no retry where no agent failed.
    await expect(passGate(deps(), { sessionId }, testActor)).rejects.toMatchObject({ code: "CONFLICT" });
    await choose(deps(), { sessionId, choice: "retry" }, testActor);
    await h.waitFor(sessionId, "the pipeline to go on", (s) => s.status === "finished" || s.fsm.startsWith("design"), 60_000);
    log = await events(sessionId);
    expect(ofType(log, "PersonChose")).toEqual([{ choice: "retry" }]);
    expect(scheduledIdeaSteps(log)).toBe(2);
    expect(forgeStatus(sessionId, log).stages.find((s) => s.name === "idea")!.state).toBe("completed");
  });

  it("guidance is recorded as critical feedback and reaches the retried prompt; abort ends the session failed with the error kept", async () => {
    const projectId = await failingProject("forge-guidance", 8);
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [] }, testActor);
    await h.waitFor(sessionId, "a person's choice", atState("agent_failed"));
    await expect(choose(deps(), { sessionId, choice: "guidance" }, testActor)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    const guidance = "Use the backup endpoint and keep the idea to five lines.";
    await choose(deps(), { sessionId, choice: "guidance", text: guidance }, testActor);
    await h.waitFor(sessionId, "a second stop", atState("agent_failed"));
    let log = await events(sessionId);
    expect(ofType(log, "PersonNeeded")).toHaveLength(2);
    expect(ofType(log, "FeedbackGiven")).toEqual([expect.objectContaining({ source: "guidance", severity: "critical", text: guidance })]);
    expect(promptsOf(log, "idea_draft")[1]).toContain(guidance);
    await choose(deps(), { sessionId, choice: "abort" }, testActor);
    const done = await h.waitFor(sessionId, "the end", (s) => s.status === "finished");
    expect(done.outcome).toBe("failed");
    log = await events(sessionId);
    expect(ofType(log, "SessionFinalized")).toEqual([
      expect.objectContaining({ outcome: "failed", errorClass: "provider_network_error", diagnosis: expect.stringContaining("503") }),
    ]);
    expect(forgeStatus(sessionId, log).status).toBe("Failed");
  });
});

describe("the budget", () => {
  it("a budget of one call ends the session budget_exhausted after that call, its artifacts kept", async () => {
    const projectId = await forgeProject("forge-budget");
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [], budget: { maxCalls: 1 } }, testActor);
    const done = await h.waitFor(sessionId, "the end", (s) => s.status === "finished");
    expect(done.outcome).toBe("budget_exhausted");
    const log = await events(sessionId);
    expect(ofType(log, "StepScheduled")).toHaveLength(1);
    expect(ofType(log, "BudgetExhausted")).toEqual([
      expect.objectContaining({ limit: "calls", used: expect.objectContaining({ calls: 1 }) }),
    ]);
    const status = forgeStatus(sessionId, log);
    expect(status).toMatchObject({ status: "Failed", outcome: "budget_exhausted", budgetUsed: { calls: 1 } });
    expect(status.artifacts.map((a) => a.path)).toEqual([A.idea]);
    expect(status.stages.find((s) => s.name === "idea")!.runs).toBe(1);
  });
});

describe("a failed check goes back to the stage it names", () => {
  it("the check fails for real, its triage names coding, the fix loop repairs the code, and the check passes", async () => {
    const broken = FORGE_CODE_FILES["src/count.js"].replace("characters: text.length", "characters: text.length + 1");
    const projectId = await forgeProject("forge-check", (s) => {
      const fixed = s.coder.coding![0]!;
      s.coder.coding = [{ ...fixed, files: { ...(fixed.files as Record<string, string>), "src/count.js": broken } }, fixed];
      s.reviewer.check = [{ reply: JSON.stringify({ goto: "coding", reason: "count() reports one character too many" }) }];
      return s;
    });
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [] }, testActor);
    const done = await h.waitFor(sessionId, "the end", (s) => s.status === "finished", 60_000);
    expect(done.outcome).toBe("completed");
    const log = await events(sessionId);
    expect(ofType<{ passed: boolean }>(log, "TestCommandRecorded").map((t) => t.passed)).toEqual([false, true]);
    expect(ofType(log, "CheckRouted")).toEqual([expect.objectContaining({ goto: "coding" })]);
    expect(transitions(log)).toEqual(
      expect.arrayContaining([
        "check_run→check_triage",
        "check_triage→coding_draft",
        "coding_critic→check_run",
        "check_run→delivery_draft",
      ]),
    );
    expect(ofType<{ stage: string }>(log, "StageReopened").map((d) => d.stage)).toEqual(["coding", "check"]);
    // The coder's second draft was told why.
    expect(promptsOf(log, "coding_draft")[1]).toContain("count() reports one character too many");
  });
});

describe("artifacts are agent output: the server's secrets never reach the record", () => {
  it("a secret value written into an artifact is redacted in the blob, the worktree, the commit and every event", async () => {
    const secret = "forge-nextauth-secret-do-not-leak-7731";
    const saved = process.env.NEXTAUTH_SECRET;
    process.env.NEXTAUTH_SECRET = secret;
    try {
      const projectId = await forgeProject("forge-secret", (s) => {
        s.planner.idea = [{ reply: "Wrote the idea.", files: { [A.idea]: `# Idea\n\nThe key is ${secret}.\n` } }];
        return s;
      });
      const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["idea"] }, testActor);
      await h.waitFor(sessionId, "the idea gate", atState("idea_review"));
      const log = await events(sessionId);
      const idea = forgeStatus(sessionId, log).artifacts.find((a) => a.path === A.idea)!;
      const text = (await artifactText(deps(), log, idea.hash)).text;
      expect(text).toBe("# Idea\n\nThe key is [redacted NEXTAUTH_SECRET].\n");
      const head = ((await h.state(sessionId)) as { head: string }).head;
      expect(gitIn(h.repo, "show", `${head}:${A.idea}`)).not.toContain(secret);
      // The test's own script holds the secret: recorded in TaskStarted and StepScheduled (which
      // snapshot the agent), it was redacted there already (server/redact.ts), so the agent wrote
      // the redacted text, and no event of the session holds the value.
      expect(JSON.stringify(log)).not.toContain(secret);
    } finally {
      if (saved === undefined) delete process.env.NEXTAUTH_SECRET;
      else process.env.NEXTAUTH_SECRET = saved;
    }
  });
});

describe("an agent's symbolic link never leads the runner out of the worktree", () => {
  it("an idea.md linked to the runner's /proc/self/environ is refused: nothing of the runner's environment is recorded, a person is asked", async () => {
    const secret = "forge-symlink-secret-do-not-leak-5519";
    const saved = process.env.NEXTAUTH_SECRET;
    process.env.NEXTAUTH_SECRET = secret;
    try {
      // A real process in the sandbox plants the link; the runner (outside it, with its own
      // environment) is the one that would follow it when it collects the artifact.
      const plant = `const fs = require("node:fs"); fs.mkdirSync(".forge", { recursive: true }); fs.symlinkSync("/proc/self/environ", ".forge/idea.md"); console.log("linked");`;
      const projectId = await forgeProject("forge-symlink");
      await db.pool.query(`UPDATE projects SET agents = jsonb_set(agents, '{planner}', $2::jsonb) WHERE id = $1`, [
        projectId,
        JSON.stringify({ kind: "command", id: "planner-cmd", argv: [process.execPath, "-e", plant] }),
      ]);
      const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [] }, testActor);
      await h.waitFor(sessionId, "a person's choice", atState("agent_failed"));
      const log = await events(sessionId);
      expect(ofType(log, "ArtifactRecorded")).toEqual([]);
      expect(ofType<{ message: string }>(log, "ForgeWarning").map((w) => w.message)).toEqual([
        expect.stringContaining("symbolic link out"),
      ]);
      expect(ofType(log, "PersonNeeded")).toEqual([
        expect.objectContaining({ cause: "agent_failed", message: expect.stringContaining("wrote no .forge/idea.md") }),
      ]);
      const leaks = await db.pool.query("SELECT count(*)::int AS n FROM blobs WHERE position(convert_to($1, 'UTF8') in content) > 0", [
        secret,
      ]);
      expect(leaks.rows[0].n).toBe(0);
      expect(JSON.stringify(log)).not.toContain(secret);
      expect(JSON.stringify(log)).not.toContain(process.env.DATABASE_URL ?? "no-database-url");
    } finally {
      if (saved === undefined) delete process.env.NEXTAUTH_SECRET;
      else process.env.NEXTAUTH_SECRET = saved;
    }
  });
});
