// What a simulated agent says when its script has nothing made for the request (a project a
// person added with simulated agents, not the demo): replies made from the request itself,
// each saying plainly that it is canned. The coder cannot do the task, so it records what
// it was asked in a note (the only file it writes); the reviewer's verdict says it read no
// code; the tester plans a command of the project's own allowlist, which the runner really
// runs: its result is never made up (docs/configuration.md, "Simulated agents").
import path from "node:path";
import type { StandIn } from "./config";
import type { AgentRequest } from "./types";

/** Where the simulated coder's notes go: a folder whose name says what is in it. */
export const SIMULATED_NOTES_DIR = "catcafe-simulated";

export interface StandInReply {
  reply: string;
  files?: Record<string, string>;
}

export function standInReply(kind: StandIn, request: Pick<AgentRequest, "prompt" | "workspace" | "allowlist">): StandInReply {
  switch (kind) {
    case "task_note":
      return taskNote(request);
    case "note_review":
      return noteReview(request.prompt);
    case "allowlist_test_plan":
      return { reply: allowlistTestPlan(request.allowlist ?? []) };
    default: {
      const unhandled: never = kind;
      throw new Error(`unknown stand-in ${String(unhandled)}`);
    }
  }
}

/** The note's path in a session's workspace: one per session (the worktree is named after it). */
export function notePath(workspace: string): string {
  const name = path.basename(workspace).replace(/[^A-Za-z0-9._-]/g, "-") || "session";
  return `${SIMULATED_NOTES_DIR}/${name}.md`;
}

function taskNote({ prompt, workspace }: Pick<AgentRequest, "prompt" | "workspace">): StandInReply {
  const file = notePath(workspace);
  const quoted = prompt
    .trim()
    .split("\n")
    .map((line) => (line ? `> ${line}` : ">"))
    .join("\n");
  const note = [
    "# A note from a simulated coder",
    "",
    "Cat Cafe's simulated coder wrote this file. It is the scripted brain: canned replies, no AI",
    "model, no network. It cannot carry out a task, so it changed nothing but this note, which",
    "records what it was asked. Delete the file, or run the task again with real agents.",
    "",
    "## What it was asked",
    "",
    quoted,
    "",
  ].join("\n");
  return {
    reply: `Coder (simulated: canned reply, no AI model): I cannot carry out this task. I wrote ${file}, a note of what was asked; no other file changed.`,
    files: { [file]: note },
  };
}

/** The files a `git diff` in the prompt changes. */
function changedFiles(prompt: string): string[] {
  return [...prompt.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)].map((m) => m[2]!);
}

function noteReview(prompt: string): StandInReply {
  const files = changedFiles(prompt);
  const others = files.filter((f) => !f.startsWith(`${SIMULATED_NOTES_DIR}/`));
  const canned = "Reviewer (simulated: canned verdict, no AI model).";
  const summary =
    files.length === 0
      ? `${canned} Nothing changed, so there is nothing to review.`
      : others.length === 0
        ? `${canned} The change is only the simulated coder's note (${files.join(", ")}): it records the task and changes no behaviour.`
        : `${canned} It reads no code: ${others.length} changed file(s) outside the simulated coder's notes were not reviewed.`;
  const findings = others.slice(0, 20).map((file) => ({
    severity: "minor" as const,
    file,
    message: "Not reviewed: a simulated reviewer reads no code. Have a real reviewer look at this file.",
  }));
  return { reply: JSON.stringify({ decision: "approve", summary, findings }) };
}

const WILDCARD = /[*?{]/;

/**
 * The command of the allowlist the simulated tester asks for: the first rule that is a whole
 * command (no wildcard), else the first whose only wildcard is a trailing `**` (run with no
 * more arguments). None: it asks for nothing it could run, and says so; the runner then
 * refuses, and the session shows why.
 */
export function allowlistCommand(allowlist: readonly (readonly string[])[]): string[] | null {
  const literal = allowlist.find((rule) => rule.length > 0 && !rule.some((t) => WILDCARD.test(t)));
  if (literal) return [...literal];
  const open = allowlist.find((rule) => rule.length > 1 && rule.at(-1) === "**" && !rule.slice(0, -1).some((t) => WILDCARD.test(t)));
  return open ? open.slice(0, -1) : null;
}

function allowlistTestPlan(allowlist: readonly (readonly string[])[]): string {
  const argv = allowlistCommand(allowlist);
  if (!argv) {
    return JSON.stringify({
      summary:
        "Tester (simulated: canned plan, no AI model). The project's allowlist has no command it can run as it is, so it asks for `git status`: the runner refuses it unless the allowlist allows it. Allow a test command to have it run.",
      commands: [{ argv: ["git", "status"], description: "no allowlisted command fits; shows the refusal" }],
    });
  }
  return JSON.stringify({
    summary: `Tester (simulated: canned plan, no AI model). It runs the project's own \`${argv.join(" ")}\` from the allowlist, for real; it wrote no test of the task.`,
    commands: [{ argv, description: "the project's own command, from its allowlist", expect: { exitCode: 0 } }],
  });
}
