// Prompts stable part first (docs/scaling.md, "Prompt economics"), through the real runner and
// executors with the demo's scripted agents (bench/lib/prompt-sessions.ts, what the bench's
// prompt_cacheable_share runs): in a review-loop session and a Forge session, every prompt an
// agent CLI reads opens with the session's stable part byte for byte, a prompt's stable part
// and thread are a prefix of the next call's, and the share of bytes a prefix cache could read
// is well above what it was before the order changed (review loop 0.376, Forge 0.075).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheableShare, commonPrefixBytes } from "../../bench/lib/prompt-share";
import { promptSessions, type PromptSessions, type PromptWorkflow, type RecordedPrompt } from "../../bench/lib/prompt-sessions";
import { DEMO_TASK_PROMPT } from "../../server/demo/content";
import { FORGE_DEMO_IDEA } from "../../server/demo/forge-content";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
let root: string;
let sessions: PromptSessions;

beforeAll(async () => {
  db = await createTestDatabase();
  root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-prompts-"));
  sessions = await promptSessions(db, root);
}, 60_000);
afterAll(async () => {
  await sessions?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const bytes = (s: string) => Buffer.from(s, "utf8");

/** The share measured on the demo-like sessions: before the reordering 0.376 and 0.075. */
const FLOOR: Record<PromptWorkflow, number> = { review_loop: 0.65, forge: 0.6 };

describe.each([
  ["review_loop", `Task:\n${DEMO_TASK_PROMPT}\n(prompts)\n`, "approved"],
  ["forge", `Idea:\n${FORGE_DEMO_IDEA}\n`, "completed"],
] as const)("%s: a session's prompts", (workflow, stable, outcome) => {
  let prompts: RecordedPrompt[];

  beforeAll(async () => {
    const run = await sessions.run(workflow, "prompts");
    expect(run.state).toBe(outcome);
    prompts = run.prompts;
  }, 90_000);

  it("every prompt opens with the session's stable part, byte for byte (nothing that varies per call before it)", () => {
    expect(prompts.length).toBeGreaterThanOrEqual(workflow === "forge" ? 11 : 8);
    for (const p of prompts) expect(p.text.startsWith(stable), `${p.role}: ${p.text.slice(0, 120)}`).toBe(true);
  });

  it("two consecutive prompts share their stable part and the thread the first one showed", () => {
    for (let i = 1; i < prompts.length; i++) {
      const [before, now] = [prompts[i - 1]!.text, prompts[i]!.text];
      const shared = commonPrefixBytes(bytes(before), bytes(now));
      expect(shared, `call ${i} (${prompts[i]!.role})`).toBeGreaterThanOrEqual(bytes(stable).length);
      // The earlier call's thread, when it had one, is within what the next one repeats.
      const threadEnd = before.indexOf("\n\n---\n\nYour task now");
      if (threadEnd > 0 && now.includes("The conversation so far:")) {
        const beforeThread = before.slice(0, threadEnd);
        // A Forge stage's drafts sit before the thread and change with the iteration; otherwise the whole thread is kept.
        if (workflow === "review_loop") expect(now.startsWith(beforeThread), `call ${i} keeps call ${i - 1}'s thread`).toBe(true);
      }
    }
  });

  it("the thread is labelled the same whichever role reads it: the role is named after it, not in it", () => {
    for (const p of prompts.filter((q) => q.text.includes("The conversation so far:"))) {
      expect(p.text).not.toContain("(you)]");
      expect(p.text).toContain(`Your task now, as the ${p.role}`);
    }
  });

  it("a diff under review shows the code; a Forge step's .forge/ artifacts are attached above it, never repeated in it", () => {
    const diffs = prompts.filter((p) => p.text.includes("The change under review (git diff):"));
    expect(diffs.length).toBeGreaterThan(0);
    for (const p of diffs) expect(p.text).not.toContain("diff --git a/.forge/");
    if (workflow === "forge") expect(diffs.some((p) => p.text.includes("diff --git a/src/count.js"))).toBe(true);
  });

  it(`the cacheable share (bytes equal to a prefix already sent, from the second call on) is at least ${FLOOR[workflow]}`, () => {
    const share = cacheableShare(prompts.map((p) => p.text));
    expect(share.calls).toBe(prompts.length - 1);
    expect(share.share).toBeGreaterThanOrEqual(FLOOR[workflow]);
  });
});

describe("the share, computed", () => {
  it("counts from the second call on, each call's longest prefix in common with any earlier one", () => {
    expect(cacheableShare(["abcdef"])).toEqual({ calls: 0, bytes: 0, cacheableBytes: 0, share: 0 });
    // "abcxyz": 3 with the first; "abcdeQ": 5 with the first (not 3 with the second).
    const share = cacheableShare(["abcdef", "abcxyz", "abcdeQ"]);
    expect(share).toEqual({ calls: 2, bytes: 12, cacheableBytes: 8, share: 8 / 12 });
    // Bytes, not characters: "é" is two.
    expect(cacheableShare(["é1", "é2"]).cacheableBytes).toBe(2);
  });
});
