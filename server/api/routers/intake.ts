// Intake from an issue tracker (docs/intake.md): the project's rules and webhook secret
// (viewers read, operators and admins set: docs/auth.md) and the held deliveries of the
// inbox (operators start or dismiss them). Thin: the work is in server/intake/.
import { AppError } from "../../errors";
import { userNames } from "../../auth/users";
import { configureProject } from "../../projects/config-edits";
import { dismissHeld, listHeld, startHeld, ZHeldFilters, ZHeldRef } from "../../intake/inbox";
import { intakeOverview, issueOfSession, ZIntakeProjectRef, ZSessionIssueRef, ZSetIntakeRulesInput } from "../../intake/overview";
import { setWebhookSecret, ZSetSecretInput } from "../../intake/secret";
import { operatorProcedure, router, viewerProcedure } from "../trpc";
import { actorOf } from "./tasks";

export const intakeRouter = router({
  show: viewerProcedure.input(ZIntakeProjectRef).query(async ({ ctx, input }) => {
    const overview = await intakeOverview(ctx, input.projectId);
    // People by name, as every page shows them (the label stays for scripts).
    const names = overview.secret ? await userNames(ctx.prisma, [overview.secret.setBy]) : {};
    return {
      ...overview,
      secret: overview.secret ? { ...overview.secret, setByName: names[overview.secret.setBy] ?? overview.secret.setBy } : null,
    };
  }),
  setRules: operatorProcedure.input(ZSetIntakeRulesInput).mutation(async ({ ctx, input }) => {
    const saved = await configureProject(
      ctx,
      {
        projectId: input.projectId,
        intake: input.rules,
        ...(input.expectedVersion !== undefined ? { expectedVersion: input.expectedVersion } : {}),
      },
      actorOf(ctx.user),
      { role: ctx.user.role },
    );
    return { version: saved.version, changed: saved.changes.length };
  }),
  setSecret: operatorProcedure.input(ZSetSecretInput).mutation(({ ctx, input }) => {
    if (!ctx.sealingKey)
      throw new AppError("PRECONDITION_FAILED", "NEXTAUTH_SECRET is not set on the server: webhook secrets cannot be sealed");
    return setWebhookSecret({ store: ctx.store, pool: ctx.pool, key: ctx.sealingKey }, input, actorOf(ctx.user));
  }),
  /** The issue a session was started from (the session page's link), or null. */
  issueOf: viewerProcedure.input(ZSessionIssueRef).query(({ ctx, input }) => issueOfSession(ctx.pool, input.sessionId)),
  held: viewerProcedure.input(ZHeldFilters.default({})).query(({ ctx, input }) => listHeld(ctx.pool, input)),
  startHeld: operatorProcedure.input(ZHeldRef).mutation(({ ctx, input }) => startHeld(ctx, input, actorOf(ctx.user))),
  dismissHeld: operatorProcedure.input(ZHeldRef).mutation(({ ctx, input }) => dismissHeld(ctx, input, actorOf(ctx.user))),
});
