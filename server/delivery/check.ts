// The Test of a project's delivery settings (req X2, docs/delivery.md "Test"): can a delivery
// reach what it would reach? A merge with no remote: the target branch in the project
// repository. A push, a pull request, or a merge with a remote (merged there): `git ls-remote` against the remote, with the token as the push sends it
// (server/workspaces/deliver.ts), then — a pull request — the provider's API, one GET of the
// repository with the token. Each with a timeout; an http(s) remote or API on a loopback or
// private address only when access.privateHosts allows it (server/net/outbound.ts). It runs in
// the web server process, with its environment: the token variable is read there (a runner
// that delivers reads its own). The token's value is never shown, returned or recorded.
import { z } from "zod";
import { withOverride, type DeliverySettings } from "../config/schemas";
import { serverOverride } from "../config/overrides";
import { loadSettings, webSettingsPath } from "../config/settings";
import type { Queryable } from "../db/pool";
import type { EventStore } from "../events/store";
import { checkDestination, hostRules, type Resolve } from "../net/hosts";
import { OutboundRefused, outboundFetch, PRIVATE_HOSTS_SETTING } from "../net/outbound";
import { getProject } from "../projects/projects";
import { redactKnownSecrets } from "../redact";
import { DeliveryProblem, remoteBranchHead, remoteUrl } from "../workspaces";
import { resolveCommit } from "../workspaces/repo";

export const ZTestDeliveryInput = z.object({ projectId: z.string().min(1).max(100) });

export const DELIVERY_TEST_TIMEOUT_MS = 15_000;

export interface DeliveryTestStep {
  what: "target" | "remote" | "api";
  ok: boolean;
  message: string;
}

export interface DeliveryTest {
  ok: boolean;
  method: DeliverySettings["method"];
  /** One line: "reachable, main at abc1234", or what failed. */
  message: string;
  steps: DeliveryTestStep[];
  /** Whether the token variable is set in the web server's environment (null: none named). */
  tokenSet: boolean | null;
}

interface TestDeps {
  pool: Queryable;
  store: EventStore;
  /** Where the token is read (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
  resolve?: Resolve;
  timeoutMs?: number;
}

const DEFAULT_API: Record<"github" | "gitlab", string> = { github: "https://api.github.com", gitlab: "https://gitlab.com/api/v4" };

/** The host a git remote URL connects to (https, ssh, scp-like `user@host:path`), or null for a local path. */
export function remoteHost(url: string): { host: string; port: number } | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    if (!URL.canParse(url)) return null;
    const u = new URL(url);
    if (u.protocol === "file:") return null;
    const defaults: Record<string, number> = { "https:": 443, "http:": 80, "ssh:": 22, "git:": 9418 };
    return { host: u.hostname.replace(/^\[|\]$/g, ""), port: u.port ? Number(u.port) : (defaults[u.protocol] ?? 443) };
  }
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)/.exec(url);
  return scp ? { host: scp[1]!, port: 22 } : null;
}

/** Text as it may be shown: the server's secrets and the token's value out of it. */
function clean(text: string, token: string | undefined): string {
  const redacted = redactKnownSecrets(text).text;
  return (token ? redacted.split(token).join("[token]") : redacted).trim().slice(0, 600);
}

export async function testDelivery(deps: TestDeps, raw: z.input<typeof ZTestDeliveryInput>): Promise<DeliveryTest> {
  const input = ZTestDeliveryInput.parse(raw);
  const project = await getProject(deps.pool, input.projectId);
  const file = loadSettings(webSettingsPath()).settings;
  const settings = withOverride(withOverride(file, (await serverOverride(deps.store)).override), project.settings);
  const delivery = settings.delivery;
  const privateHosts = settings.access.privateHosts;
  const timeoutMs = deps.timeoutMs ?? DELIVERY_TEST_TIMEOUT_MS;
  const env = deps.env ?? process.env;
  const token = delivery.tokenEnv ? env[delivery.tokenEnv] || undefined : undefined;
  const tokenSet = delivery.tokenEnv ? token !== undefined : null;
  const steps: DeliveryTestStep[] = [];
  const done = (message: string): DeliveryTest => ({
    ok: steps.every((s) => s.ok),
    method: delivery.method,
    message,
    steps,
    tokenSet,
  });

  if (delivery.method === "merge" && !delivery.remote) {
    const head = await resolveCommit(project.repoPath, `refs/heads/${delivery.target}`).catch(() => null);
    steps.push(
      head
        ? { what: "target", ok: true, message: `${delivery.target} at ${head.slice(0, 7)} in ${project.repoPath}` }
        : { what: "target", ok: false, message: `the target branch ${delivery.target} does not exist in ${project.repoPath}` },
    );
    return done(head ? `ready to merge into ${delivery.target} (at ${head.slice(0, 7)})` : steps[0]!.message);
  }

  if (!delivery.remote) {
    steps.push({ what: "remote", ok: false, message: `no remote: a ${delivery.method} delivery needs one (delivery.remote)` });
    return done(steps[0]!.message);
  }
  const url = await remoteUrl(project.repoPath, delivery.remote);
  const target = remoteHost(url);
  if (target) {
    const destination = await checkDestination(target.host, target.port, hostRules(privateHosts), {
      setting: PRIVATE_HOSTS_SETTING,
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
    });
    if (!destination.ok) {
      steps.push({ what: "remote", ok: false, message: `not tried: ${destination.reason}` });
      return done(steps[0]!.message);
    }
  }
  try {
    const head = await remoteBranchHead({
      repoPath: project.repoPath,
      remote: delivery.remote,
      branch: delivery.target,
      ...(token && /^https?:/i.test(url) ? { token } : {}),
      timeoutMs,
    });
    // A merge moves the remote's target: it must be there. A push or a pull request makes its own branch.
    if (!head && delivery.method === "merge")
      steps.push({
        what: "target",
        ok: false,
        message: `reachable, but the target branch ${delivery.target} does not exist on the remote`,
      });
    else
      steps.push({
        what: "remote",
        ok: true,
        message: head ? `reachable, ${delivery.target} at ${head.slice(0, 7)}` : `reachable; it has no branch ${delivery.target} yet`,
      });
  } catch (err) {
    const message = err instanceof DeliveryProblem || err instanceof Error ? err.message : String(err);
    steps.push({ what: "remote", ok: false, message: clean(message, token) });
  }

  if (delivery.method === "pull_request") {
    const pr = delivery.pullRequest;
    if (!pr) steps.push({ what: "api", ok: false, message: "no pull request provider: set delivery.pullRequest (provider, repository)" });
    else steps.push(await testProviderApi(pr, token, { privateHosts, timeoutMs, ...(deps.resolve ? { resolve: deps.resolve } : {}) }));
  }
  const failed = steps.find((s) => !s.ok);
  return done(failed ? failed.message : steps.map((s) => s.message).join("; "));
}

async function testProviderApi(
  pr: NonNullable<DeliverySettings["pullRequest"]>,
  token: string | undefined,
  options: { privateHosts: readonly string[]; timeoutMs: number; resolve?: Resolve },
): Promise<DeliveryTestStep> {
  const base = (pr.apiBaseUrl ?? DEFAULT_API[pr.provider]).replace(/\/+$/, "");
  const path =
    pr.provider === "github"
      ? `/repos/${pr.repository.split("/").map(encodeURIComponent).join("/")}`
      : `/projects/${encodeURIComponent(pr.repository)}`;
  const headers: Record<string, string> = { accept: "application/json", "user-agent": "catcafe" };
  if (token) {
    if (pr.provider === "github") headers.authorization = `Bearer ${token}`;
    else headers["private-token"] = token;
  }
  try {
    const res = await outboundFetch(
      `${base}${path}`,
      { method: "GET", headers, signal: AbortSignal.timeout(options.timeoutMs) },
      { privateHosts: options.privateHosts, ...(options.resolve ? { resolve: options.resolve } : {}) },
    );
    const text = await res.text();
    if (!res.ok)
      return { what: "api", ok: false, message: clean(`${pr.provider} answered HTTP ${res.status}: ${text.slice(0, 300)}`, token) };
    const body = (text ? JSON.parse(text) : {}) as { default_branch?: string; full_name?: string; path_with_namespace?: string };
    const name = body.full_name ?? body.path_with_namespace ?? pr.repository;
    return {
      what: "api",
      ok: true,
      message: `${pr.provider} repository ${name} found${body.default_branch ? ` (default branch ${body.default_branch})` : ""}${token ? "" : ", without a token"}`,
    };
  } catch (err) {
    const why = err instanceof OutboundRefused ? `not tried: ${err.message}` : `${base}: ${(err as Error).message}`;
    return { what: "api", ok: false, message: clean(why, token) };
  }
}
