// Pull requests of a delivery (docs/delivery.md): GitHub (pulls) and GitLab (merge requests) through
// the tracker's client (../tracker/client.ts, on @octokit/rest and @gitbeaker/rest), base URL
// configurable (GitHub Enterprise, self-hosted GitLab). One request per delivery opens the pull
// request for the session's branch, or updates the one already open for it: delivering twice
// never opens a second. Failures come back classed (the client's TrackerProblem): a refusal of
// the input (422) or of the token (401/403) is final; a rate limit (429, with Retry-After) and a
// server error (5xx) or a network failure are worth retrying.
import { trackerClient, TrackerProblem, type PullRequest, type TrackerProblemClass, type TrackerProvider } from "../tracker/client";

export type PullRequestProvider = TrackerProvider;
export type { PullRequest };
export type PullRequestProblemClass = TrackerProblemClass;
/** A pull request's problem, with its class: the tracker client's. */
export { TrackerProblem as PullRequestProblem };

export interface PullRequestInput {
  provider: PullRequestProvider;
  apiBaseUrl?: string;
  repository: string;
  token: string | undefined;
  head: string;
  base: string;
  title: string;
  body: string;
  signal?: AbortSignal;
}

/** Opens the pull request for `head`, or updates the one open for it. */
export function upsertPullRequest(input: PullRequestInput): Promise<PullRequest> {
  const { head, base, title, body, ...target } = input;
  return trackerClient(target).upsertPullRequest({ head, base, title, body });
}

export { TrackerProblem };
