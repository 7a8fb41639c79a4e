// Prompts stable part first (docs/scaling.md, "Prompt economics"), through the real runner and
// executors with the demo's scripted agents (bench/lib/prompt-sessions.ts, what the bench's
// prompt_cacheable_share runs): in a review-loop session and a Forge session, every prompt an
// agent CLI reads opens with the session's stable part byte for byte, a prompt's stable part
// and thread are a prefix of the next call's (a diff shown after the build that made it, a Forge
// artifact after the message of the step that wrote it), and the share of bytes a prefix cache
// could read is well above what it was before the order changed (review loop 0.376, Forge 0.075).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheableShare, commonPrefixBytes } from "../../bench/lib/prompt-share";
import { promptSessions, type PromptSessions, type PromptWorkflow, type RecordedPrompt } from "../../bench/lib/prompt-sessions";
import { DEMO_TASK_PROMPT } from "../../server/demo/content";
import { FORGE_DEMO_IDEA } from "../../server/demo/forge-content";
import { FORGE_DEFINITION } from "../../server/forge/definition";
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

/**
 * The share measured on the demo-like sessions: before the reordering 0.376 and 0.075; with the
 * stable part first 0.676 and 0.622; with the diff after its build and each Forge artifact
 * after its writer's message 0.709 and 0.667; with the Forge's preamble (the pipeline and the
 * critic's format, first in every call) 0.709 and 0.713.
 */
const FLOOR: Record<PromptWorkflow, number> = { review_loop: 0.7, forge: 0.7 };

describe.each([
  ["review_loop", `Task:\n${DEMO_TASK_PROMPT}\n(prompts)\n`, "approved"],
  ["forge", `${FORGE_DEFINITION.preamble}\n\nIdea:\n${FORGE_DEMO_IDEA}\n`, "completed"],
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
    /** A prompt without the diff under review, which only a reviewer's and a tester's calls show (after the build). */
    const withoutDiff = (text: string) =>
      text.replace(/\n\nThe change under review \(git diff\):\n[\s\S]*?(?=\n\n\[[a-z]+\]\n|\n\n---\n\nYour task now|$)/g, "");
    let kept = 0;
    for (let i = 1; i < prompts.length; i++) {
      const [before, now] = [prompts[i - 1]!.text, prompts[i]!.text];
      const shared = commonPrefixBytes(bytes(before), bytes(now));
      expect(shared, `call ${i} (${prompts[i]!.role})`).toBeGreaterThanOrEqual(bytes(stable).length);
      // The earlier call's thread, when it had one, is within what the next one repeats.
      const threadEnd = before.indexOf("\n\n---\n\nYour task now");
      if (threadEnd < 0 || !now.includes("The conversation so far:")) continue;
      const beforeThread = before.slice(0, threadEnd);
      // A diff is shown right after the build that made it: a next call that shows it too repeats it.
      if (beforeThread.includes("The change under review") && now.includes("The change under review")) {
        expect(now.startsWith(beforeThread), `call ${i} repeats call ${i - 1}'s thread with its diff`).toBe(true);
      }
      // A Forge stage's redraft shows the new version after its own message, the earlier one's place left.
      if (/iteration [2-9]\d* of at most/.test(now) && now.includes("Your task now, as the reviewer")) continue;
      expect(withoutDiff(now).startsWith(withoutDiff(beforeThread)), `call ${i} keeps call ${i - 1}'s thread`).toBe(true);
      kept++;
    }
    expect(kept).toBeGreaterThanOrEqual(workflow === "forge" ? 9 : 6);
  });

  it("what a step made is shown once, after its message in the thread: a diff after the build, a Forge artifact after its writer's message", () => {
    const last = prompts.at(-1)!.text;
    const thread = last.slice(last.indexOf("The conversation so far:"));
    if (workflow === "review_loop") {
      // The tester, after the reviewer approved the second build, sees the diff after that build's message.
      expect(last).toMatch(/\[coder\]\nTrimmed leading dashes\.\n\nThe change under review \(git diff\):\ndiff --git a\/src\/slugify\.js/);
    } else {
      // Each artifact once, after the message of the step that wrote its current version (the PRD after its redraft).
      for (const artifact of [".forge/idea.md", ".forge/prd.md", ".forge/design.md", ".forge/plan.json", ".forge/code_metadata.json"]) {
        expect(thread.split(`--- ${artifact} ---`).length - 1, artifact).toBe(1);
      }
      expect(thread.indexOf("--- .forge/prd.md ---")).toBeGreaterThan(thread.indexOf("Removed the monitoring requirement"));
      expect(thread.indexOf("--- .forge/idea.md ---")).toBeLessThan(thread.indexOf("Drafted the PRD"));
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
