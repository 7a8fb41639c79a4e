// Session workspaces (DESIGN "Workspaces"): the public API. Each session works in its own
// detached git worktree of the project at a recorded commit; a fork starts from the commit
// recorded at its fork point.
export { missingClone, repositoryMapping, resolveBaseCommit } from "./repo";
export { KnownClones } from "./known-clones";
export { CleanWorktrees } from "./clean-worktrees";
export {
  claimWorkspace,
  createWorkspace,
  deleteRefs,
  workspaceOwner,
  forkWorkspace,
  removeWorkspace,
  resetWorkspace,
  workspaceAtCommit,
  worktreeStamp,
  type CreateWorkspaceInput,
  type ForkWorkspaceInput,
  type ResetWorkspaceOptions,
  type Workspace,
} from "./workspace";
export {
  changedFilesSince,
  commitWorkspace,
  diffCommits,
  diffSince,
  moveBranch,
  type ChangedFile,
  type CommitAuthor,
  type CommitWorkspaceInput,
  type WorkspaceCommit,
} from "./changes";
export { bundlePrerequisites, bundleSession, ensureCommit, type BundleChain, type BundleLink } from "./bundles";
export { fetchSessionCommit, mergeIntoRemote, pushSessionBranch, type SessionRemote } from "./remote-home";
export { assertValidSessionId, isInside } from "./paths";
export { fingerprintProject, type Fingerprint } from "./fingerprint";
export {
  DeliveryProblem,
  mergeInto,
  mergedCommit,
  pushBranch,
  remoteBranchHead,
  remoteUrl,
  type DeliveryProblemClass,
  type MergeResult,
} from "./deliver";
