// The tracker's step kinds (docs/delivery.md, "The tracker"), run by a runner because the token
// is in the runner's environment (delivery.tokenEnv, docs/delivery.md "Token"), like `webhook`
// steps: each attempt is in the session's events (StepStarted, StepFailed with its class,
// StepCompleted with what was done), a 5xx, 429 or network failure is retried with the step's
// backoff (Retry-After honoured), anything else fails the step as it is.
//   - `issue_comment`: one comment on the issue the session was started from, linking the
//     session, with the proposal; a retried attempt finds its comment by its marker and posts
//     nothing again;
//   - `commit_status`: the session's state as the commit status `catcafe` of its branch head.
import { z } from "zod";
import { StepExecutionError } from "../runner/executors";
import { defineStepKind, type StepKind } from "../runner/step-kinds";
import { trackerClient, TrackerProblem, type TrackerTarget } from "./client";

export const ISSUE_COMMENT_STEP = "issue_comment";
export const COMMIT_STATUS_STEP = "commit_status";

/** How a tracker step is retried: a tracker down for a minute still gets the news (as webhooks). */
export const TRACKER_STEP = { timeoutMs: 60_000, maxAttempts: 5, backoffMs: [1_000, 5_000, 15_000, 60_000] };

const ZTarget = z.object({
  provider: z.enum(["github", "gitlab"]),
  apiBaseUrl: z.string().nullable(),
  repository: z.string().min(1),
  /** The runner's environment variable holding the token (its value never leaves the runner). */
  tokenEnv: z.string().nullable(),
});

export const ZIssueCommentInput = ZTarget.extend({
  issueNumber: z.number().int().positive(),
  body: z.string().min(1).max(60_000),
  /** In the body, and looked for before posting: the comment of this session, once. */
  marker: z.string().min(1),
});
export type IssueCommentInput = z.infer<typeof ZIssueCommentInput>;

export const ZCommitStatusInput = ZTarget.extend({
  sha: z.string().regex(/^[0-9a-f]{40}$/),
  state: z.enum(["awaiting_confirm", "running", "success", "failure", "cancelled"]),
  description: z.string().max(255),
  targetUrl: z.string().nullable(),
});
export type CommitStatusInput = z.infer<typeof ZCommitStatusInput>;

const ZIssueCommentOutput = z.object({ commentId: z.number().int(), existed: z.boolean() });
const ZCommitStatusOutput = z.object({ posted: z.literal(true), state: ZCommitStatusInput.shape.state });

export interface TrackerStepDeps {
  /** Where tokens are read (default: this process's environment). */
  env?: Record<string, string | undefined>;
}

function targetOf(deps: TrackerStepDeps, input: z.infer<typeof ZTarget>, signal: AbortSignal): TrackerTarget {
  return {
    provider: input.provider,
    ...(input.apiBaseUrl ? { apiBaseUrl: input.apiBaseUrl } : {}),
    repository: input.repository,
    token: input.tokenEnv ? (deps.env ?? process.env)[input.tokenEnv] : undefined,
    signal,
  };
}

/** A tracker's refusal as the step's failure: retried when worth it, with the tracker's Retry-After. */
async function classed<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (!(err instanceof TrackerProblem)) throw err;
    const errorClass =
      err.problemClass === "rate_limited" ? "provider_rate_limit" : err.retryable ? "provider_network_error" : "tool_error";
    throw new StepExecutionError(errorClass, `[${err.problemClass}] ${err.message}`, err.retryable, err.retryAfterMs);
  }
}

export function trackerStepKinds(deps: TrackerStepDeps = {}): StepKind[] {
  return [
    defineStepKind({
      kind: ISSUE_COMMENT_STEP,
      input: ZIssueCommentInput,
      output: ZIssueCommentOutput,
      async execute(_step, input, ctx) {
        const client = trackerClient(targetOf(deps, input, ctx.signal));
        const comment = await classed(client.commentOnIssueOnce(input.issueNumber, input.body, input.marker));
        return { commentId: comment.id, existed: comment.existed };
      },
    }),
    defineStepKind({
      kind: COMMIT_STATUS_STEP,
      input: ZCommitStatusInput,
      output: ZCommitStatusOutput,
      async execute(_step, input, ctx) {
        const client = trackerClient(targetOf(deps, input, ctx.signal));
        await classed(
          client.setCommitStatus(input.sha, { state: input.state, description: input.description, targetUrl: input.targetUrl }),
        );
        return { posted: true as const, state: input.state };
      },
    }),
  ];
}
