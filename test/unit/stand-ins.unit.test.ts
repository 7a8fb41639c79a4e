// The simulated agents' replies made from the request (server/agents/stand-ins.ts): the
// tester's command comes from the allowlist as it is, the verdict validates and says what it
// did not read, the note is the only file and quotes the task.
import { describe, expect, it } from "vitest";
import { allowlistCommand, notePath, standInReply } from "../../server/agents/stand-ins";
import { ZReviewVerdict, ZTestPlan } from "../../server/events/agent-outputs";

const request = (over: { prompt?: string; allowlist?: string[][] } = {}) => ({
  prompt: over.prompt ?? "Implement the task.\nTask:\nAdd a /health endpoint",
  workspace: "/tmp/workspaces/0193a000-0000-7000-8000-000000000001",
  allowlist: over.allowlist ?? [],
});

describe("allowlistCommand", () => {
  it("takes a whole command first, then a rule whose only wildcard is a trailing **, else none", () => {
    expect(
      allowlistCommand([
        ["node", "--test", "**"],
        ["npm", "test"],
      ]),
    ).toEqual(["npm", "test"]);
    expect(
      allowlistCommand([
        ["npx", "vitest", "run", "*"],
        ["node", "--test", "**"],
      ]),
    ).toEqual(["node", "--test"]);
    expect(
      allowlistCommand([
        ["npx", "vitest", "run", "*"],
        ["npm", "run", "{test,lint}"],
      ]),
    ).toBeNull();
    expect(allowlistCommand([])).toBeNull();
  });
});

describe("standInReply", () => {
  it("task_note writes one note, named after the workspace, quoting what was asked", () => {
    const made = standInReply("task_note", request());
    const file = notePath(request().workspace);
    expect(file).toBe("catcafe-simulated/0193a000-0000-7000-8000-000000000001.md");
    expect(Object.keys(made.files ?? {})).toEqual([file]);
    expect(made.files![file]).toContain("> Add a /health endpoint");
    expect(made.reply).toMatch(/simulated: canned reply/);
  });

  it("note_review approves only the note without findings, and flags every other file as not reviewed", () => {
    const onlyNote = JSON.parse(
      standInReply("note_review", request({ prompt: "diff --git a/catcafe-simulated/x.md b/catcafe-simulated/x.md\n" })).reply,
    );
    expect(ZReviewVerdict.parse(onlyNote)).toMatchObject({ decision: "approve", findings: [] });
    const other = JSON.parse(standInReply("note_review", request({ prompt: "diff --git a/src/a.ts b/src/a.ts\n" })).reply);
    expect(ZReviewVerdict.parse(other).findings).toEqual([expect.objectContaining({ file: "src/a.ts", severity: "minor" })]);
    expect(other.summary).toMatch(/not reviewed/);
  });

  it("allowlist_test_plan is a valid plan of the allowlist's command, or says none fits", () => {
    const plan = ZTestPlan.parse(JSON.parse(standInReply("allowlist_test_plan", request({ allowlist: [["npm", "test"]] })).reply));
    expect(plan.commands.map((c) => c.argv)).toEqual([["npm", "test"]]);
    const none = ZTestPlan.parse(JSON.parse(standInReply("allowlist_test_plan", request()).reply));
    expect(none.summary).toMatch(/no command it can run/);
  });
});
