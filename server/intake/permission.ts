// Whether the author of a comment command may start a task (docs/intake.md, "Who may start a
// task by comment"): write access on the tracker — GitHub's collaborator permission admin,
// maintain or write; GitLab's member access level 30 (Developer) or more. Asked of the
// tracker's API with the project's delivery token (delivery.tokenEnv) through @octokit/rest and
// @gitbeaker/rest, every call through the server's outbound rule (server/net/outbound.ts:
// a host on a non-public address only when access.privateHosts allows it).
import { Octokit } from "@octokit/rest";
import { ProjectMembers } from "@gitbeaker/rest";
import { createRequesterFn } from "@gitbeaker/requester-utils";
import { outboundFetch, type OutboundPolicy } from "../net/outbound";
import type { IntakeProvider } from "./rules";

export type WriteAccess = { allowed: true; level: string } | { allowed: false; level: string } | { unknown: string };

export interface PermissionQuery {
  provider: IntakeProvider;
  repository: string;
  apiBaseUrl?: string;
  token: string;
  user: string;
  /** GitLab's numeric user id (its members API is by id). */
  userId?: number;
  policy: OutboundPolicy;
}

const TIMEOUT_MS = 15_000;
const GITHUB_WRITE = new Set(["admin", "maintain", "write"]);
/** GitLab's Developer: may push, the nearest to GitHub's write. */
const GITLAB_DEVELOPER = 30;

/** A fetch for the API clients: the same call through outboundFetch, under `policy`. */
function policyFetch(policy: OutboundPolicy) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    const method = request.method === "POST" ? "POST" : "GET";
    const body = method === "POST" ? await request.text() : undefined;
    return outboundFetch(
      request.url,
      { method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(TIMEOUT_MS) },
      policy,
    );
  };
}

export async function writeAccess(q: PermissionQuery): Promise<WriteAccess> {
  try {
    return q.provider === "github" ? await githubAccess(q) : await gitlabAccess(q);
  } catch (err) {
    const status =
      (err as { status?: number; cause?: { response?: { status?: number } } }).status ??
      (err as { cause?: { response?: { status?: number } } }).cause?.response?.status;
    // Not a collaborator or member at all: the API answers 404.
    if (status === 404) return { allowed: false, level: "none" };
    return {
      unknown: status ? `the ${q.provider} API answered ${status}` : `the ${q.provider} API could not be reached (${(err as Error).name})`,
    };
  }
}

async function githubAccess(q: PermissionQuery): Promise<WriteAccess> {
  const [owner, repo] = q.repository.split("/");
  const octokit = new Octokit({
    auth: q.token,
    userAgent: "catcafe",
    ...(q.apiBaseUrl ? { baseUrl: q.apiBaseUrl.replace(/\/+$/, "") } : {}),
    request: { fetch: policyFetch(q.policy), retries: 0 },
  });
  const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner: owner!, repo: repo!, username: q.user });
  const level = data.role_name ?? data.permission;
  return GITHUB_WRITE.has(level) || GITHUB_WRITE.has(data.permission) ? { allowed: true, level } : { allowed: false, level };
}

async function gitlabAccess(q: PermissionQuery): Promise<WriteAccess> {
  if (q.userId === undefined) return { unknown: "the GitLab delivery did not name the commenter's user id" };
  const policy = q.policy;
  const requesterFn = createRequesterFn(
    (_options, request) => Promise.resolve(request),
    async (endpoint, options) => {
      const { prefixUrl, searchParams, method, headers } = (options ?? {}) as {
        prefixUrl?: string;
        searchParams?: string;
        method?: string;
        headers?: Record<string, string>;
      };
      const url = new URL(endpoint, prefixUrl?.endsWith("/") ? prefixUrl : `${prefixUrl}/`);
      url.search = searchParams ?? "";
      const response = await policyFetch(policy)(url, { method: method ?? "GET", ...(headers ? { headers } : {}) });
      if (!response.ok) throw Object.assign(new Error(`GitLab API ${response.status}`), { status: response.status });
      return { body: await response.json(), headers: Object.fromEntries(response.headers.entries()), status: response.status };
    },
  );
  const host = (q.apiBaseUrl ?? "https://gitlab.com/api/v4").replace(/\/+$/, "").replace(/\/api\/v4$/, "");
  const members = new ProjectMembers({ host, token: q.token, requesterFn });
  const member = (await members.show(q.repository, q.userId, { includeInherited: true })) as { access_level?: number };
  const level = member.access_level ?? 0;
  return level >= GITLAB_DEVELOPER ? { allowed: true, level: String(level) } : { allowed: false, level: String(level) };
}
