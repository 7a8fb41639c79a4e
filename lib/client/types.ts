// The API's types for clients, derived from the server's router. Type-only: nothing of the
// server is loaded at run time, so a script needs only this folder and its npm packages.
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../server/api/root";

export type { AppRouter };
/** `RouterInputs["tasks"]["start"]`: what a procedure takes. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** `RouterOutputs["sessions"]["timeline"]`: what a procedure returns. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

export type TaskSummary = RouterOutputs["tasks"]["get"];
export type TimelineEntry = RouterOutputs["sessions"]["timeline"][number];
export type SessionListItem = RouterOutputs["sessions"]["list"]["items"][number];
export type CurrentUserInfo = NonNullable<RouterOutputs["auth"]["me"]>;
export type Role = CurrentUserInfo["role"];
