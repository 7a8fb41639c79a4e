// The provider client (docs/delivery.md, "The tracker"): GitHub through `@octokit/rest`, GitLab
// through `@gitbeaker/rest`, each on the API base URL the settings name (GitHub Enterprise, a
// self-hosted GitLab). What Cat Cafe asks of a tracker: open or update the pull request of a
// branch, comment on an issue once, and post a commit status. Every call has a timeout and
// follows the caller's abort signal; its failures come back classed (TrackerProblem): a refusal
// of the input (422, other 4xx) or of the token (401/403) is final; a rate limit (429, or 403
// with none left, with Retry-After) and a server error (5xx) or a network failure are worth
// retrying — by the step that made the call, never inside the client: gitbeaker's own requester
// retries 429 and 502 ten times without reading Retry-After and loses the status, so GitLab
// calls go through `gitlabRequester` below (the library's `requesterFn` option), which does not.
import { Commits, IssueNotes, MergeRequests } from "@gitbeaker/rest";
import { Octokit } from "@octokit/rest";

export type TrackerProvider = "github" | "gitlab";

/** Where the calls go, and as whom. The token is the runner's (never recorded). */
export interface TrackerTarget {
  provider: TrackerProvider;
  apiBaseUrl?: string;
  /** `owner/name` on GitHub; the project's path or id on GitLab. */
  repository: string;
  token: string | undefined;
  signal?: AbortSignal;
}

export type TrackerProblemClass = "pr_invalid" | "auth_failed" | "rate_limited" | "api_unavailable";

export class TrackerProblem extends Error {
  constructor(
    readonly problemClass: TrackerProblemClass,
    message: string,
    readonly status: number | null,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "TrackerProblem";
  }
  get retryable(): boolean {
    return this.problemClass === "rate_limited" || this.problemClass === "api_unavailable";
  }
}

export interface PullRequest {
  number: number;
  url: string;
  /** An open one for the branch existed: it was updated, not opened again. */
  updated: boolean;
}

export interface PullRequestChange {
  head: string;
  base: string;
  title: string;
  body: string;
}

/** A commit status as Cat Cafe names it; each provider's own word is chosen by the client. */
export type CommitState = "awaiting_confirm" | "running" | "success" | "failure" | "cancelled";

export interface CommitStatus {
  state: CommitState;
  description: string;
  targetUrl: string | null;
}

export interface IssueComment {
  id: number;
  /** It was there already (found by its marker): not posted again. */
  existed: boolean;
}

export interface TrackerClient {
  /** Opens the pull request for `head`, or updates the one open for it. */
  upsertPullRequest(change: PullRequestChange): Promise<PullRequest>;
  /** Comments on the issue unless a comment of it carrying `marker` is there already (a retried post stays one comment). */
  commentOnIssueOnce(issue: number, body: string, marker: string): Promise<IssueComment>;
  /** Posts the status of `sha` under the name `catcafe`. */
  setCommitStatus(sha: string, status: CommitStatus): Promise<void>;
}

export const DEFAULT_API_BASE: Record<TrackerProvider, string> = {
  github: "https://api.github.com",
  gitlab: "https://gitlab.com/api/v4",
};
export const STATUS_CONTEXT = "catcafe";
const REQUEST_TIMEOUT_MS = 30_000;

const GITHUB_STATE: Record<CommitState, "pending" | "success" | "failure"> = {
  awaiting_confirm: "pending",
  running: "pending",
  success: "success",
  failure: "failure",
  cancelled: "failure",
};
const GITLAB_STATE: Record<CommitState, "pending" | "running" | "success" | "failed" | "canceled"> = {
  awaiting_confirm: "pending",
  running: "running",
  success: "success",
  failure: "failed",
  cancelled: "canceled",
};

/** An answer's class, from its status and headers (the same for both providers). */
function problemOf(provider: TrackerProvider, status: number, headers: Headers, said: string, what: string): TrackerProblem {
  if (status === 429 || (status === 403 && headers.get("x-ratelimit-remaining") === "0")) {
    const retryAfter = Number(headers.get("retry-after"));
    return new TrackerProblem(
      "rate_limited",
      `${provider} rate-limited the request (HTTP ${status}): ${said}`,
      status,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
    );
  }
  if (status === 401 || status === 403)
    return new TrackerProblem("auth_failed", `${provider} refused the token (HTTP ${status}): ${said}`, status);
  if (status >= 500) return new TrackerProblem("api_unavailable", `${provider} failed (HTTP ${status}): ${said}`, status);
  return new TrackerProblem("pr_invalid", `${provider} refused ${what} (HTTP ${status}): ${said}`, status);
}

const baseOf = (target: TrackerTarget) => (target.apiBaseUrl ?? DEFAULT_API_BASE[target.provider]).replace(/\/+$/, "");

/** Every call's signal: the caller's, and a timeout. */
const callSignal = (target: TrackerTarget) =>
  target.signal ? AbortSignal.any([target.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]) : AbortSignal.timeout(REQUEST_TIMEOUT_MS);

/**
 * A fetch that classes every failure where the answer is still whole (its status and headers),
 * then throws it: the libraries see only successes. `what` names the call for a refusal.
 */
function classedFetch(target: TrackerTarget, what: () => string): typeof fetch {
  return async (input, init) => {
    let res: Response;
    try {
      res = await fetch(input, { ...init, signal: callSignal(target) });
    } catch (err) {
      const url = input instanceof Request ? input.url : String(input);
      throw new TrackerProblem("api_unavailable", `${init?.method ?? "GET"} ${url}: ${(err as Error).message}`, null);
    }
    if (res.ok) return res;
    const said = (await res.text().catch(() => "")).slice(0, 500);
    throw problemOf(target.provider, res.status, res.headers, said, what());
  };
}

const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** Octokit wraps what its fetch throws: the class made there is the cause. */
async function unwrapped<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof Error && err.cause instanceof TrackerProblem) throw err.cause;
    throw err;
  }
}

function github(target: TrackerTarget): TrackerClient {
  let what = "the request";
  const octokit = new Octokit({
    baseUrl: baseOf(target),
    userAgent: "catcafe",
    log: silent,
    request: { fetch: classedFetch(target, () => what) },
  });
  // As a bearer token (octokit's own auth sends `token …`): fine-grained tokens and apps' tokens alike.
  const token = target.token;
  if (token) octokit.hook.before("request", (options) => void (options.headers.authorization = `Bearer ${token}`));
  const [owner = "", repo = ""] = target.repository.split("/");
  return {
    async upsertPullRequest(change) {
      what = "the pull request";
      const { data: open } = await unwrapped(octokit.rest.pulls.list({ owner, repo, state: "open", head: `${owner}:${change.head}` }));
      const existing = open[0];
      if (existing) {
        const { data } = await unwrapped(
          octokit.rest.pulls.update({ owner, repo, pull_number: existing.number, title: change.title, body: change.body }),
        );
        return { number: data.number, url: data.html_url, updated: true };
      }
      const { data } = await unwrapped(octokit.rest.pulls.create({ owner, repo, ...change }));
      return { number: data.number, url: data.html_url, updated: false };
    },
    async commentOnIssueOnce(issue, body, marker) {
      what = "the issue comment";
      const comments = await unwrapped(
        octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: issue, per_page: 100 }),
      );
      const mine = comments.find((c) => c.body?.includes(marker));
      if (mine) return { id: mine.id, existed: true };
      const { data } = await unwrapped(octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body }));
      return { id: data.id, existed: false };
    },
    async setCommitStatus(sha, status) {
      what = "the commit status";
      await unwrapped(
        octokit.rest.repos.createCommitStatus({
          owner,
          repo,
          sha,
          state: GITHUB_STATE[status.state],
          context: STATUS_CONTEXT,
          description: status.description.slice(0, 140),
          ...(status.targetUrl ? { target_url: status.targetUrl } : {}),
        }),
      );
    },
  };
}

/** The options of gitbeaker's resources, and the requester they are built with. */
type GitLabOptions = NonNullable<ConstructorParameters<typeof MergeRequests>[0]>;
type Requester = ReturnType<NonNullable<GitLabOptions["requesterFn"]>>;

/**
 * gitbeaker's requester with our handler: one request, no retries, no client-side rate
 * limiter, the API base URL as given (gitbeaker would append /api/v4 to a host), and the
 * answer as the library expects it (`{ body, headers, status }`).
 */
function gitlabRequester(target: TrackerTarget, what: () => string): GitLabOptions["requesterFn"] {
  const send = classedFetch(target, what);
  const base = baseOf(target);
  return (resource) => {
    // The resource's own prefix (`projects` for notes), after gitbeaker's `<host>/api/v4`.
    const prefix = resource.url.slice(`${base}/api/v4`.length).replace(/^\/+|\/+$/g, "");
    const request =
      (method: string) =>
      async (endpoint: string, options: { searchParams?: Record<string, unknown>; body?: unknown } = {}) => {
        const url = new URL([base, prefix, endpoint].filter(Boolean).join("/"));
        for (const [k, v] of Object.entries(options.searchParams ?? {})) {
          if (v !== undefined && v !== null) url.searchParams.set(snake(k), String(v));
        }
        const headers: Record<string, string> = { accept: "application/json", "user-agent": "catcafe" };
        if (target.token) headers["private-token"] = target.token;
        let body: string | undefined;
        if (options.body && typeof options.body === "object") {
          headers["content-type"] = "application/json";
          body = JSON.stringify(Object.fromEntries(Object.entries(options.body).map(([k, v]) => [snake(k), v])));
        }
        const res = await send(url, { method, headers, ...(body !== undefined ? { body } : {}) });
        const text = await res.text();
        return {
          body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          headers: Object.fromEntries(res.headers.entries()),
          status: res.status,
        };
      };
    // The library's methods are generic in the body they expect; the body is the API's JSON, as with its own requester.
    const requester = {
      get: request("GET"),
      post: request("POST"),
      put: request("PUT"),
      patch: request("PATCH"),
      delete: request("DELETE"),
    };
    return requester as Requester;
  };
}

/** gitbeaker names options in camelCase; the API wants snake_case. */
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function gitlab(target: TrackerTarget): TrackerClient {
  let what = "the request";
  // The requester ignores host and token (gitlabRequester sends both): the library's options need them set.
  const options: GitLabOptions = { host: baseOf(target), token: target.token ?? "", requesterFn: gitlabRequester(target, () => what) };
  const project = target.repository;
  return {
    async upsertPullRequest(change) {
      what = "the merge request";
      const requests = new MergeRequests(options);
      const open = await requests.all({ projectId: project, state: "opened", sourceBranch: change.head, maxPages: 1 });
      const existing = open[0];
      if (existing) {
        const mr = await requests.edit(project, existing.iid, { title: change.title, description: change.body });
        return { number: mr.iid, url: String(mr.web_url), updated: true };
      }
      const mr = await requests.create(project, change.head, change.base, change.title, { description: change.body });
      return { number: mr.iid, url: String(mr.web_url), updated: false };
    },
    async commentOnIssueOnce(issue, body, marker) {
      what = "the issue comment";
      const notes = new IssueNotes(options);
      const existing = await notes.all(project, issue, { perPage: 100, maxPages: 5 });
      const mine = existing.find((n) => n.body.includes(marker));
      if (mine) return { id: mine.id, existed: true };
      const note = await notes.create(project, issue, body);
      return { id: note.id, existed: false };
    },
    async setCommitStatus(sha, status) {
      what = "the commit status";
      await new Commits(options).editStatus(project, sha, GITLAB_STATE[status.state], {
        name: STATUS_CONTEXT,
        description: status.description.slice(0, 255),
        ...(status.targetUrl ? { targetUrl: status.targetUrl } : {}),
      });
    },
  };
}

/** The client of the target's provider; its calls share the target's token, timeout and signal. */
export function trackerClient(target: TrackerTarget): TrackerClient {
  return target.provider === "github" ? github(target) : gitlab(target);
}
