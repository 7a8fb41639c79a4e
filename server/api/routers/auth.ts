// Who am I: the caller's identity and role, or null (scripts use it to check a token).
import { publicProcedure, router } from "../trpc";

export const authRouter = router({
  me: publicProcedure.query(({ ctx }) =>
    ctx.user ? { id: ctx.user.id, email: ctx.user.email, name: ctx.user.name, role: ctx.user.role, via: ctx.user.via } : null,
  ),
});
