// What a runner does with a `deliver` step (docs/delivery.md): the session's commit made present in
// this runner's clone (from the remote's session branch, else the session's bundles, when it
// was made elsewhere), then pushed, pushed with a pull request opened or updated, or merged
// (on the remote when there is one, else in the registered repository itself). A problem worth trying
// again (the remote unreachable, a rate limit, a server error, a target that moved) fails the
// attempt as retryable; any other is the step's result, recorded by the reactor with its class.
import path from "node:path";
import { z } from "zod";
import type { Db } from "../db/pool";
import { ZBlobRef } from "../events/blobs";
import { sessionBundles } from "../events/bundle-chain";
import { DELIVERY_PROBLEM_CLASSES } from "../events/delivery-catalog";
import type { ClaimedStep } from "../runner/dispatch";
import { notRunnableWhenNotFound, StepExecutionError, StepNotRunnableHere, type StepContext } from "../runner/executors";
import {
  DeliveryProblem,
  ensureCommit,
  fetchSessionCommit,
  mergeInto,
  mergeIntoRemote,
  missingClone,
  pushBranch,
  repositoryMapping,
} from "../workspaces";
import { PullRequestProblem, upsertPullRequest } from "./pull-requests";

export const DELIVER_STEP = "deliver";

export const ZDeliverInput = z.object({
  method: z.enum(["push", "pull_request", "merge"]),
  repoPath: z.string().min(1),
  branch: z.string().min(1),
  commit: z.string().regex(/^[0-9a-f]{40}$/),
  bundle: ZBlobRef.nullable(),
  remote: z.string().nullable(),
  target: z.string().min(1),
  /** The runner's environment variable holding the token (its value never leaves the runner). */
  tokenEnv: z.string().nullable(),
  pullRequest: z
    .object({
      provider: z.enum(["github", "gitlab"]),
      apiBaseUrl: z.string().nullable(),
      repository: z.string(),
      title: z.string(),
      body: z.string(),
    })
    .nullable(),
  mergeMessage: z.string(),
  /**
   * The step runs only where the registered `repoPath` is the runner's own repository, not a
   * clone mapped to it (CATCAFE_REPOSITORY_PATHS): a merge with no remote moves the registered
   * repository's target. A runner with a mapped clone refuses the attempt (retried, for a
   * runner that has it). Absent in steps recorded before it: read as such for a merge with no remote.
   */
  needsRegisteredRepository: z.boolean().optional(),
});
export type DeliverInput = z.infer<typeof ZDeliverInput>;

export const ZDeliverOutput = z.discriminatedUnion("ok", [
  z.object({
    kind: z.literal("delivery"),
    ok: z.literal(true),
    pushed: z.object({ remote: z.string() }).nullable(),
    merged: z
      .object({ target: z.string(), commit: z.string(), how: z.enum(["fast_forward", "merge_commit", "already_merged"]) })
      .nullable(),
    pullRequest: z.object({ provider: z.enum(["github", "gitlab"]), number: z.number(), url: z.string(), updated: z.boolean() }).nullable(),
  }),
  z.object({
    kind: z.literal("delivery"),
    ok: z.literal(false),
    errorClass: z.enum(DELIVERY_PROBLEM_CLASSES),
    message: z.string(),
    files: z.array(z.string()),
  }),
]);
export type DeliverOutput = z.infer<typeof ZDeliverOutput>;

export interface DeliveryExecutorDeps {
  pool: Db;
  /** This runner's clone of a project registered at `repoPath` (CATCAFE_REPOSITORY_PATHS). */
  repositoryPath?: (repoPath: string) => string;
  /** Where tokens are read (default: this process's environment). */
  env?: Record<string, string | undefined>;
}

/** Runs a delivery (its input parsed by its entry, ./step-kinds.ts). */
export function deliveryExecutor(
  deps: DeliveryExecutorDeps,
): (step: ClaimedStep, input: DeliverInput, ctx: StepContext) => Promise<DeliverOutput> {
  return async (step, input, ctx) => {
    const repoPath = deps.repositoryPath?.(input.repoPath) ?? input.repoPath;
    refuseMappedClone(input, repoPath);
    // A runner without the clone, or the commit, hands the delivery to one that has them.
    const missing = await missingClone(repoPath, repositoryMapping(input.repoPath, repoPath));
    if (missing) throw new StepNotRunnableHere(missing);
    const token = input.tokenEnv ? (deps.env ?? process.env)[input.tokenEnv] : undefined;
    const home = input.remote ? { remote: input.remote, ...(token ? { token } : {}) } : null;
    try {
      // The commit from the remote's session branch first, the session's bundle if need be.
      await fetchSessionCommit({ repoPath, remote: async () => home, branch: input.branch, commit: input.commit });
      await ensureCommit(repoPath, input.commit, sessionBundles(deps.pool, step.sessionId)).catch(notRunnableWhenNotFound);
      if (input.method === "merge") {
        if (!home) {
          const merged = await mergeInto({ repoPath, target: input.target, commit: input.commit, message: input.mergeMessage });
          return { kind: "delivery", ok: true, pushed: null, merged, pullRequest: null };
        }
        // With a remote, the merge is the remote's (docs/delivery.md, "The remote is the home"): the
        // session's branch pushed there too, then the target merged there; no clone's branch moves.
        await pushBranch({ repoPath, remote: home.remote, branch: input.branch, commit: input.commit, ...(token ? { token } : {}) });
        const merged = await mergeIntoRemote({
          repoPath,
          remote: home,
          target: input.target,
          commit: input.commit,
          message: input.mergeMessage,
        });
        return { kind: "delivery", ok: true, pushed: { remote: home.remote }, merged, pullRequest: null };
      }
      if (!input.remote) return { kind: "delivery", ok: false, errorClass: "not_configured", message: "no remote to push to", files: [] };
      await pushBranch({ repoPath, remote: input.remote, branch: input.branch, commit: input.commit, ...(token ? { token } : {}) });
      const pr = input.pullRequest;
      const pullRequest =
        input.method === "pull_request" && pr
          ? {
              provider: pr.provider,
              ...(await upsertPullRequest({
                provider: pr.provider,
                ...(pr.apiBaseUrl ? { apiBaseUrl: pr.apiBaseUrl } : {}),
                repository: pr.repository,
                token,
                head: input.branch,
                base: input.target,
                title: pr.title,
                body: pr.body,
                signal: ctx.signal,
              })),
            }
          : null;
      return { kind: "delivery", ok: true, pushed: { remote: input.remote }, merged: null, pullRequest };
    } catch (err) {
      if (err instanceof DeliveryProblem) {
        // Retried; if it keeps failing, the reactor records it with this class (the message's tag).
        if (err.retryable) throw new StepExecutionError("provider_network_error", `[${err.problemClass}] ${err.message}`, true);
        return { kind: "delivery", ok: false, errorClass: err.problemClass, message: err.message, files: err.files };
      }
      if (err instanceof PullRequestProblem) {
        if (err.retryable) {
          const errorClass = err.problemClass === "rate_limited" ? "provider_rate_limit" : "provider_network_error";
          throw new StepExecutionError(errorClass, err.message, true, err.retryAfterMs);
        }
        return { kind: "delivery", ok: false, errorClass: err.problemClass, message: err.message, files: [] };
      }
      throw err;
    }
  };
}

/** Whether the step must run on the registered repository itself (see ZDeliverInput). */
const needsRegisteredRepository = (input: DeliverInput) => input.needsRegisteredRepository ?? (input.method === "merge" && !input.remote);

/**
 * Refuses, as a retryable attempt (another runner may have the registered repository), a step
 * that must merge into the registered repository on a runner whose repository for the project
 * is a clone mapped to it: merging there would move a cache's branch, not the project's.
 */
function refuseMappedClone(input: DeliverInput, repoPath: string): void {
  if (!needsRegisteredRepository(input) || path.resolve(repoPath) === path.resolve(input.repoPath)) return;
  throw new StepExecutionError(
    "internal_error",
    `[needs_registered_repository] merging into ${input.target} with no delivery remote moves the registered repository ${input.repoPath}; ` +
      `this runner has a clone of it (${repoPath}, CATCAFE_REPOSITORY_PATHS): left to a runner whose repository is the registered one, or set delivery.remote`,
    true,
  );
}
