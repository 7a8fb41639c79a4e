// The tracker's pure parts (docs/delivery.md, "The tracker"): the closing line and the body's
// cut, the commit state of each session state, the reviewer's text scrubbed and cut, and the
// webhook deliveries that are no review to follow up (answered before anything is read).
import { describe, expect, it } from "vitest";
import type { Db } from "../../server/db/pool";
import type { EventStore } from "../../server/events/store";
import { closingLine, MAX_BODY_CHARS, pullRequestBody } from "../../server/tracker/pull-request-body";
import { followUpFromPullRequestDelivery, MAX_REVIEW_TEXT, reviewText } from "../../server/tracker/review-follow-ups";
import { commitState } from "../../server/tracker/schedule";
import type { StartedTask } from "../../server/task-engine";
import type { RecordedEvent } from "../../server/events/types";

const issue = { provider: "github" as const, repository: "acme/app", issueNumber: 7, issueUrl: "u", title: "t" };

describe("the closing line", () => {
  it("is `Closes #n` in the issue's repository, `Closes owner/name#n` from another, none across providers", () => {
    expect(closingLine(issue, { provider: "github", repository: "acme/app" })).toBe("Closes #7");
    expect(closingLine(issue, { provider: "github", repository: "acme/web" })).toBe("Closes acme/app#7");
    expect(closingLine(issue, { provider: "gitlab", repository: "acme/app" })).toBeNull();
  });

  it("survives the body's cut: a body over the limit is cut before it, and it stays the last line", () => {
    const created = { type: "SessionCreated", streamId: "s-1", data: { title: "T", workflow: "review_loop", state: "x" } };
    const { body } = pullRequestBody("s-1", [created as unknown as RecordedEvent], {
      publicUrl: `http://cats.test/${"x".repeat(MAX_BODY_CHARS)}`,
      issue,
      pullRequest: { provider: "github", repository: "acme/app" },
    });
    expect(body.length).toBeLessThanOrEqual(MAX_BODY_CHARS);
    expect(body.endsWith("\n\nCloses #7")).toBe(true);
    expect(body).toContain("… (cut)");
  });
});

describe("the commit state", () => {
  const task = (status: "active" | "finished", fsm: string, outcome?: string) => ({ status, fsm, outcome }) as unknown as StartedTask;
  it.each([
    [task("active", "awaiting_operator_confirm"), "awaiting_confirm"],
    [task("active", "building"), "running"],
    [task("finished", "approved", "approved"), "success"],
    [task("finished", "completed", "completed"), "success"],
    [task("finished", "x", "max_iterations_reached"), "failure"],
    [task("finished", "x", "failed"), "failure"],
    [task("finished", "x", "cancelled"), "cancelled"],
  ])("%# → %s", (t, state) => expect(commitState(t)).toBe(state));
});

describe("the reviewer's text", () => {
  it("has tokens taken out and is cut to its limit", () => {
    expect(reviewText("use ghp_abcdefghijklmnopqrstuvwxyz0123 here")).toBe("use [redacted] here");
    expect(reviewText("y".repeat(MAX_REVIEW_TEXT + 10))).toHaveLength(MAX_REVIEW_TEXT + "\n… (cut)".length);
  });
});

describe("deliveries that are no review to follow up", () => {
  // Nothing is read for these: the dependencies are never touched.
  const deps = { store: {} as EventStore, pool: {} as Db, botUser: "catcafe-bot" };
  const review = (state: string, body: string | null, login = "jane", action = "submitted") => ({
    action,
    review: { state, body, user: { login } },
    pull_request: { number: 1 },
    repository: { full_name: "acme/app" },
  });
  it.each([
    ["github", "pull_request_review", review("approved", "LGTM"), "a review approved with nothing to change"],
    ["github", "pull_request_review", review("commented", ""), "a review commented with nothing to change"],
    ["github", "pull_request_review", review("dismissed", null, "jane", "dismissed"), "a review dismissed, not submitted"],
    ["github", "pull_request_review", review("changes_requested", "x", "CatCafe-Bot"), "a comment by Cat Cafe's own user catcafe-bot"],
    ["github", "pull_request_review", review("commented", "see <!-- catcafe:session s-1 -->"), "a comment Cat Cafe wrote"],
    ["github", "issues", {}, "GitHub event issues is no review"],
    ["github", "pull_request_review", { action: "submitted" }, "not a pull_request_review payload"],
    [
      "gitlab",
      "Merge Request Hook",
      { object_kind: "merge_request" },
      "a merge request update carries no reviewer's text: its comments (notes) are followed up",
    ],
    ["gitlab", "Push Hook", { object_kind: "push" }, "GitLab event Push Hook is no review"],
  ] as const)("%s %s (%#) → ignored", async (provider, event, payload, reason) => {
    expect(await followUpFromPullRequestDelivery(deps, provider, event, payload, "d-1")).toEqual({ outcome: "ignored", reason });
  });
});
