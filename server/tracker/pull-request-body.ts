// The pull request's title and body (docs/delivery.md, "Pull request"): the task, the session's
// summary (its last build's account), the review's rounds (each round's blocking findings, and
// whether a later round resolved them) and the final verdict, the test commands with their
// results, the link to the session, and `Closes #n` when the session (or the one it was forked
// from) was started from an issue, so merging the pull request closes the issue.
import type { AppEvent } from "../events/catalog";
import type { RecordedEvent } from "../events/types";
import { foldTask } from "../task-engine";
import type { SessionIssue } from "./session-issue";

/** GitHub refuses a body over 65,536 characters; GitLab's limit is higher. */
export const MAX_BODY_CHARS = 60_000;
const MAX_SUMMARY_CHARS = 4_000;

type Event = RecordedEvent & AppEvent;

export const sessionLink = (publicUrl: string | undefined, sessionId: string) =>
  publicUrl ? `${publicUrl.replace(/\/+$/, "")}/sessions/${sessionId}` : null;

/** `Closes #7` in the issue's own repository; `Closes owner/name#7` from another one. */
export function closingLine(issue: SessionIssue, pullRequest: { provider: string; repository: string }): string | null {
  if (issue.provider !== pullRequest.provider) return null;
  return issue.repository === pullRequest.repository ? `Closes #${issue.issueNumber}` : `Closes ${issue.repository}#${issue.issueNumber}`;
}

function reviewRounds(events: readonly Event[]): string[] {
  const verdicts = events.filter((e): e is Extract<Event, { type: "ReviewVerdictRecorded" }> => e.type === "ReviewVerdictRecorded");
  if (!verdicts.length) return [];
  const lines = ["## Review", ""];
  verdicts.forEach((v, i) => {
    const blocking = v.data.findings.filter((f) => f.severity === "blocking");
    const later = i < verdicts.length - 1;
    lines.push(`- Round ${i + 1}: **${v.data.decision}**: ${v.data.summary}`);
    for (const f of blocking) {
      // A blocking finding of a round that a later round approved was resolved by the next build.
      const resolved = later && verdicts.slice(i + 1).some((n) => n.data.decision === "approve");
      lines.push(`  - blocking, ${resolved ? "resolved" : "open"}: ${f.file}${f.line ? `:${f.line}` : ""} ${f.message}`);
    }
  });
  const last = verdicts.at(-1)!;
  lines.push("", `Final verdict: **${last.data.decision}**: ${last.data.summary}`, "");
  return lines;
}

function testResults(events: readonly Event[]): string[] {
  const tests = events.filter((e): e is Extract<Event, { type: "TestCommandRecorded" }> => e.type === "TestCommandRecorded");
  if (!tests.length) return [];
  const lines = ["## Tests", ""];
  for (const t of tests.slice(-10)) {
    lines.push(`- \`${t.data.argv.join(" ")}\`: ${t.data.passed ? "passed" : "failed"} (exit ${t.data.exitCode ?? "none"})`);
  }
  return [...lines, ""];
}

export function pullRequestBody(
  sessionId: string,
  history: readonly RecordedEvent[],
  options: { publicUrl: string | undefined; issue: SessionIssue | null; pullRequest: { provider: string; repository: string } | null },
): { title: string; body: string } {
  const events = history as readonly Event[];
  const state = foldTask(history);
  const created = events.find((e): e is Extract<Event, { type: "SessionCreated" }> => e.type === "SessionCreated");
  const title = created?.data.title ?? sessionId;
  const lines = [`Delivered by Cat Cafe from session \`${sessionId}\`.`, ""];
  if (state.status !== "none") {
    lines.push("## Task", "", state.config.prompt, "");
    const build = events.filter((e) => e.type === "AgentOutputRecorded" && e.data.phase === "build").at(-1);
    if (build?.type === "AgentOutputRecorded") lines.push("## Summary", "", build.data.preview.slice(0, MAX_SUMMARY_CHARS), "");
    lines.push(...reviewRounds(events), ...testResults(events));
  }
  const link = sessionLink(options.publicUrl, sessionId);
  if (link) lines.push(`Session: ${link}`);
  const closes = options.issue && options.pullRequest ? closingLine(options.issue, options.pullRequest) : null;
  // The closing line last, and never cut: it is what links the issue.
  const tail = closes ? `\n\n${closes}` : "";
  const text = lines.join("\n");
  const body =
    text.length + tail.length > MAX_BODY_CHARS ? `${text.slice(0, MAX_BODY_CHARS - tail.length - 20)}\n\n… (cut)${tail}` : text + tail;
  return { title, body };
}
