// The events of a delivery (docs/delivery.md): a person asks for an approved session's work to leave
// its worktree (pushed, as a pull request, or merged locally); the runner that delivers
// records what it did, or why it could not, with the problem's class. In the session's stream.
import { z } from "zod";
import { defineEvent } from "./registry";

const ZMethod = z.enum(["push", "pull_request", "merge"]);
const ZCommit = z.string().regex(/^[0-9a-f]{40}$/);
/** Which delivery (its step), how, and what: the session's branch at its commit. */
const deliveryRef = { stepId: z.uuid(), method: ZMethod, branch: z.string().min(1), commit: ZCommit };

export const DELIVERY_PROBLEM_CLASSES = [
  "push_rejected",
  "auth_failed",
  "remote_unreachable",
  "merge_conflict",
  "target_moved",
  "target_checked_out",
  "not_configured",
  "pr_invalid",
  "rate_limited",
  "api_unavailable",
  "needs_registered_repository",
  "internal_error",
] as const;

export const deliveryCatalog = {
  /**
   * A build's commit could not be pushed to the session's branch on the project's remote
   * (docs/delivery.md, "The remote is the home"): the build stands (committed and bundled); the
   * next build's push or the delivery pushes the branch again. Recorded by the attempt that built.
   */
  SessionBranchPushFailed: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      attempt: z.number().int().positive(),
      branch: z.string().min(1),
      commit: ZCommit,
      remote: z.string(),
      errorClass: z.enum(DELIVERY_PROBLEM_CLASSES),
      message: z.string(),
    }),
    summary: (d) => `Could not push ${d.branch} (${d.commit.slice(0, 12)}) to ${d.remote} (${d.errorClass}): ${d.message}`,
  }),
  /** A person approves the delivery of an approved session (the project may need several). */
  DeliveryApproved: defineEvent({
    version: 1,
    schema: z.object({ note: z.string().max(2000).optional() }),
    summary: (d) => `Delivery approved${d.note ? `: ${d.note}` : ""}`,
  }),
  DeliveryRequested: defineEvent({
    version: 1,
    schema: z.object({
      ...deliveryRef,
      target: z.string().min(1),
      remote: z.string().nullable(),
      pullRequest: z.object({ provider: z.enum(["github", "gitlab"]), repository: z.string() }).nullable(),
      /** Who approved the delivery (actor labels), when the project asks for approvals. */
      approvedBy: z.array(z.string()).optional(),
    }),
    summary: (d) =>
      d.method === "merge"
        ? `Delivery asked: merge ${d.branch} (${d.commit.slice(0, 12)}) into ${d.target}`
        : `Delivery asked: push ${d.branch} (${d.commit.slice(0, 12)})${d.remote ? ` to ${d.remote}` : ""}${d.method === "pull_request" ? `, pull request into ${d.target}` : ""}`,
  }),
  DeliveryCompleted: defineEvent({
    version: 1,
    schema: z.object({
      ...deliveryRef,
      pushed: z.object({ remote: z.string() }).nullable(),
      merged: z.object({ target: z.string(), commit: ZCommit, how: z.enum(["fast_forward", "merge_commit", "already_merged"]) }).nullable(),
      pullRequest: z
        .object({ provider: z.enum(["github", "gitlab"]), number: z.number().int(), url: z.string(), updated: z.boolean() })
        .nullable(),
    }),
    summary: (d) =>
      d.pullRequest
        ? `Delivered: pull request #${d.pullRequest.number} ${d.pullRequest.updated ? "updated" : "opened"} (${d.pullRequest.url})`
        : d.merged
          ? `Delivered: ${d.branch} merged into ${d.merged.target} (${d.merged.how.replace("_", " ")})`
          : `Delivered: ${d.branch}${d.pushed ? ` pushed to ${d.pushed.remote}` : ""}`,
  }),
  DeliveryFailed: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      method: ZMethod,
      errorClass: z.enum(DELIVERY_PROBLEM_CLASSES),
      message: z.string(),
      /** A merge conflict's files. */
      files: z.array(z.string()),
    }),
    summary: (d) => `Delivery failed (${d.errorClass}): ${d.message}`,
  }),
  /**
   * A reviewer's text on the pull request a delivery of this session opened (a verified webhook
   * delivery, docs/delivery.md "Review comments"), and the follow-up it became: a modify fork of
   * the session (a new iteration that delivers onto the same pull request) or a message to the
   * follow-up still running. Once per webhook delivery id.
   */
  PullRequestFeedbackReceived: defineEvent({
    version: 1,
    schema: z.object({
      provider: z.enum(["github", "gitlab"]),
      repository: z.string().min(1),
      number: z.number().int().positive(),
      deliveryId: z.string().min(1).max(200),
      /** The webhook event's name (pull_request_review, pull_request_review_comment, note). */
      event: z.string().min(1).max(100),
      author: z.string().max(200),
      /** The reviewer's text as the follow-up got it (redacted, size-limited). */
      text: z.string().max(12_000),
      followUp: z.object({ sessionId: z.string().min(1), how: z.enum(["modify", "follow_up"]) }),
    }),
    summary: (d) =>
      `Review on ${d.provider === "github" ? "pull request" : "merge request"} #${d.number} by ${d.author}: ${d.followUp.how === "modify" ? `follow-up session ${d.followUp.sessionId}` : `sent to ${d.followUp.sessionId}`}`,
  }),
} as const;
