// Users of the team (admin, req X2): list (with the last sign-in), create, change role, disable / enable.
import { z } from "zod";
import {
  createUser,
  listUsers,
  setUserDisabled,
  setUserRole,
  ZCreateUserInput,
  ZSetDisabledInput,
  ZSetRoleInput,
  type UserSummary,
} from "../../auth/users";
import { recentSignInAttempts } from "../../auth/sign-in-limit";
import { userActor } from "../../auth/team-changes";
import { adminProcedure, router } from "../trpc";

export interface UserListItem {
  id: string;
  email: string;
  name: string;
  role: UserSummary["role"];
  createdAt: string;
  disabledAt: string | null;
  lastSignInAt: string | null;
}

function toItem(u: UserSummary): UserListItem {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    createdAt: u.createdAt.toISOString(),
    disabledAt: u.disabledAt?.toISOString() ?? null,
    lastSignInAt: u.lastSignInAt?.toISOString() ?? null,
  };
}

export const usersRouter = router({
  list: adminProcedure.query(async ({ ctx }) => (await listUsers(ctx.prisma)).map(toItem)),
  /** The latest password sign-in attempts, newest first: email, address, ok / wrong / throttled, when. */
  signIns: adminProcedure
    .input(z.object({ limit: z.number().int().min(1).max(1000).default(100) }).default({ limit: 100 }))
    .query(async ({ ctx, input }) => (await recentSignInAttempts(ctx.prisma, input.limit)).map((a) => ({ ...a, at: a.at.toISOString() }))),
  create: adminProcedure
    .input(ZCreateUserInput)
    .mutation(async ({ ctx, input }) => toItem(await createUser(ctx, input, userActor(ctx.user.id)))),
  /** Recorded as UserRoleChanged in the `team` stream (docs/auth.md, "Audit"). */
  setRole: adminProcedure
    .input(ZSetRoleInput)
    .mutation(async ({ ctx, input }) => toItem(await setUserRole(ctx, input, { userId: ctx.user.id }))),
  /** `disabled: false` enables the user again. Recorded as UserDisabled / UserEnabled. */
  disable: adminProcedure
    .input(ZSetDisabledInput)
    .mutation(async ({ ctx, input }) => toItem(await setUserDisabled(ctx, input, { userId: ctx.user.id }))),
});
