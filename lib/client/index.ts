// The typed Cat Cafe client (README.md, "Scripts"): import it from any TypeScript script.
//
//   const cats = createCatCafeClient({ url: "http://localhost:3000", token: process.env.CATCAFE_TOKEN });
//   const { sessionId } = await cats.tasks.start.mutate({ projectId: "demo", prompt: "Fix slugify()" });
//
// Every procedure of the server's router is here with its input and output types; the
// server itself is never loaded (types only). See docs/api.md and docs/examples/.
export { authHeaders, createCatCafeClient, type CatCafeClient, type CatCafeClientOptions } from "./client";
export { CatCafeHttpError, describeError, type ClientErrorInfo } from "./errors";
export { checkExportDir, downloadExport, exportPathProblem, writeExportFiles, type ExportedFiles } from "./export";
export {
  followSession,
  isSuccessfulOutcome,
  isWaitingForPerson,
  MIN_POLL_INTERVAL_MS,
  SUCCESS_OUTCOMES,
  type FollowEntry,
  type FollowOptions,
  type FollowStatus,
  type SessionUpdate,
} from "./follow";
export { createTokenWithPassword, defaultTokenName, signInWithPassword, type CreatedToken, type PasswordSignIn } from "./sign-in";
export type { AppRouter, CurrentUserInfo, Role, RouterInputs, RouterOutputs, SessionListItem, TaskSummary, TimelineEntry } from "./types";
export { normalizeServerUrl } from "./url";
