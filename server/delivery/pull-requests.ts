// Pull requests over the providers' HTTP APIs (docs/delivery.md): GitHub (pulls) and GitLab (merge
// requests), base URL configurable (GitHub Enterprise, self-hosted GitLab). One request per
// delivery opens the pull request for the session's branch, or updates the one already open
// for it: delivering twice never opens a second. Failures come back classed: a refusal of
// the input (422) or of the token (401/403) is final; a rate limit (429, with Retry-After)
// and a server error (5xx) or a network failure are worth retrying.
export type PullRequestProvider = "github" | "gitlab";

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

export interface PullRequest {
  number: number;
  url: string;
  /** An open one for the branch existed: it was updated, not opened again. */
  updated: boolean;
}

export type PullRequestProblemClass = "pr_invalid" | "auth_failed" | "rate_limited" | "api_unavailable";

export class PullRequestProblem extends Error {
  constructor(
    readonly problemClass: PullRequestProblemClass,
    message: string,
    readonly status: number | null,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "PullRequestProblem";
  }
  get retryable(): boolean {
    return this.problemClass === "rate_limited" || this.problemClass === "api_unavailable";
  }
}

const DEFAULT_BASE: Record<PullRequestProvider, string> = {
  github: "https://api.github.com",
  gitlab: "https://gitlab.com/api/v4",
};
const REQUEST_TIMEOUT_MS = 30_000;

async function call(input: PullRequestInput, method: string, path: string, body?: unknown): Promise<unknown> {
  const base = (input.apiBaseUrl ?? DEFAULT_BASE[input.provider]).replace(/\/+$/, "");
  const headers: Record<string, string> = { accept: "application/json", "content-type": "application/json", "user-agent": "catcafe" };
  if (input.token) {
    if (input.provider === "github") headers.authorization = `Bearer ${input.token}`;
    else headers["private-token"] = input.token;
  }
  const signal = input.signal
    ? AbortSignal.any([input.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)])
    : AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, { method, headers, signal, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (err) {
    throw new PullRequestProblem("api_unavailable", `${method} ${base}${path}: ${(err as Error).message}`, null);
  }
  const text = await res.text();
  if (res.ok) return text ? (JSON.parse(text) as unknown) : null;
  const said = text.slice(0, 500);
  if (res.status === 429 || (res.status === 403 && res.headers.get("x-ratelimit-remaining") === "0")) {
    const retryAfter = Number(res.headers.get("retry-after"));
    throw new PullRequestProblem(
      "rate_limited",
      `${input.provider} rate-limited the request (HTTP ${res.status}): ${said}`,
      res.status,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
    );
  }
  if (res.status === 401 || res.status === 403)
    throw new PullRequestProblem("auth_failed", `${input.provider} refused the token (HTTP ${res.status}): ${said}`, res.status);
  if (res.status >= 500)
    throw new PullRequestProblem("api_unavailable", `${input.provider} failed (HTTP ${res.status}): ${said}`, res.status);
  throw new PullRequestProblem("pr_invalid", `${input.provider} refused the pull request (HTTP ${res.status}): ${said}`, res.status);
}

interface GitHubPull {
  number: number;
  html_url: string;
}
interface GitLabMergeRequest {
  iid: number;
  web_url: string;
}

async function github(input: PullRequestInput): Promise<PullRequest> {
  const repo = input.repository.split("/").map(encodeURIComponent).join("/");
  const owner = input.repository.split("/")[0] ?? "";
  const open = (await call(
    input,
    "GET",
    `/repos/${repo}/pulls?state=open&head=${encodeURIComponent(`${owner}:${input.head}`)}`,
  )) as GitHubPull[];
  const existing = Array.isArray(open) ? open[0] : undefined;
  if (existing) {
    const pull = (await call(input, "PATCH", `/repos/${repo}/pulls/${existing.number}`, {
      title: input.title,
      body: input.body,
    })) as GitHubPull;
    return { number: pull.number, url: pull.html_url, updated: true };
  }
  const pull = (await call(input, "POST", `/repos/${repo}/pulls`, {
    title: input.title,
    head: input.head,
    base: input.base,
    body: input.body,
  })) as GitHubPull;
  return { number: pull.number, url: pull.html_url, updated: false };
}

async function gitlab(input: PullRequestInput): Promise<PullRequest> {
  const project = encodeURIComponent(input.repository);
  const open = (await call(
    input,
    "GET",
    `/projects/${project}/merge_requests?state=opened&source_branch=${encodeURIComponent(input.head)}`,
  )) as GitLabMergeRequest[];
  const existing = Array.isArray(open) ? open[0] : undefined;
  if (existing) {
    const mr = (await call(input, "PUT", `/projects/${project}/merge_requests/${existing.iid}`, {
      title: input.title,
      description: input.body,
    })) as GitLabMergeRequest;
    return { number: mr.iid, url: mr.web_url, updated: true };
  }
  const mr = (await call(input, "POST", `/projects/${project}/merge_requests`, {
    source_branch: input.head,
    target_branch: input.base,
    title: input.title,
    description: input.body,
  })) as GitLabMergeRequest;
  return { number: mr.iid, url: mr.web_url, updated: false };
}

/** Opens the pull request for `head`, or updates the one open for it. */
export function upsertPullRequest(input: PullRequestInput): Promise<PullRequest> {
  return input.provider === "github" ? github(input) : gitlab(input);
}
