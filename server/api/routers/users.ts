// Users of the team (admin): list, create, change role, disable / enable.
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
import { adminProcedure, router } from "../trpc";

export interface UserListItem {
  id: string;
  email: string;
  name: string;
  role: UserSummary["role"];
  createdAt: string;
  disabledAt: string | null;
}

function toItem(u: UserSummary): UserListItem {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    createdAt: u.createdAt.toISOString(),
    disabledAt: u.disabledAt?.toISOString() ?? null,
  };
}

export const usersRouter = router({
  list: adminProcedure.query(async ({ ctx }) => (await listUsers(ctx.prisma)).map(toItem)),
  create: adminProcedure.input(ZCreateUserInput).mutation(async ({ ctx, input }) => toItem(await createUser(ctx.prisma, input))),
  setRole: adminProcedure.input(ZSetRoleInput).mutation(async ({ ctx, input }) => toItem(await setUserRole(ctx.prisma, input))),
  disable: adminProcedure
    .input(ZSetDisabledInput)
    .mutation(async ({ ctx, input }) => toItem(await setUserDisabled(ctx.prisma, input, { userId: ctx.user.id }))),
});
