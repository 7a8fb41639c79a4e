// Configuration (req M1–M5, M9, X2): projects with allowlists and agents, shells found on this
// machine, brains (with a connectivity check), workflow definitions and execution FSMs as
// graphs. Repository paths, executables and endpoints are for operators and admins;
// workflow definitions are for every member. Admins edit the server's settings overrides
// and each project's record; operators edit a project's agents per role and its delivery
// (docs/auth.md; the domain refuses the rest to them). Every edit is a ConfigChanged event
// with its actor, listed in the history and revertible.
// Thin: each procedure calls the projects domain (server/projects/), which owns them.
import { z } from "zod";
import { actorLabel } from "../../events/catalog";
import { userNames } from "../../auth/users";
import { brainsOverview, checkConfiguredBrain, ZCheckBrainInput } from "../../projects/brains";
import {
  configHistory,
  configureProject,
  configureServer,
  effectiveSettings,
  fileSettings,
  projectConfigStream,
  revertChange,
  SERVER_CONFIG_STREAM,
  serverOverride,
  ZConfigureProjectInput,
  ZConfigureServerInput,
  ZRevertInput,
  type ConfigHistoryEntry,
} from "../../projects/config-edits";
import { projectsOverview } from "../../projects/overview";
import { checkRoleAgent, projectRoles, ZCheckRoleInput } from "../../projects/roles";
import { testDelivery, ZTestDeliveryInput } from "../../delivery/check";
import { listRunners } from "../../runner/liveness";
import { getProject } from "../../projects/projects";
import { shellsOverview } from "../../projects/shells";
import { workflowsOverview } from "../../projects/workflows";
import type { Context } from "../context";
import { actorOf } from "./tasks";
import { adminProcedure, operatorProcedure, router, viewerProcedure } from "../trpc";

/** History entries with each actor's name (a user's name or email, else the actor's label). */
async function named(ctx: Context, entries: ConfigHistoryEntry[]) {
  const names = await userNames(
    ctx.prisma,
    entries.map((e) => actorLabel(e.actor)),
  );
  return entries.map((e) => ({ ...e, actorName: names[actorLabel(e.actor)] ?? actorLabel(e.actor) }));
}

/** The agent CLIs each live runner recorded when it started (runners.shells). */
async function liveRunnerShells(ctx: Context) {
  return (await listRunners(ctx.pool, { liveOnly: true })).runners.map((r) => ({ where: `${r.host} (runner ${r.id})`, shells: r.shells }));
}

export const settingsRouter = router({
  projects: operatorProcedure.query(async ({ ctx }) => {
    const projects = await projectsOverview(ctx.pool, ctx.store);
    return Promise.all(projects.map(async (p) => ({ ...p, history: await named(ctx, p.history) })));
  }),
  /** The settings in force (for a project, or the server's), each with the layer it comes from. */
  effective: operatorProcedure.input(z.object({ projectId: z.string().min(1).max(100).optional() })).query(async ({ ctx, input }) => {
    const { override } = await serverOverride(ctx.store);
    const project = input.projectId ? await getProject(ctx.pool, input.projectId) : null;
    return {
      projectId: project?.id ?? null,
      maxIterations: project?.maxIterations ?? null,
      settings: effectiveSettings(fileSettings(), override, project?.settings),
    };
  }),
  history: operatorProcedure
    .input(z.object({ projectId: z.string().min(1).max(100).optional() }))
    .query(async ({ ctx, input }) =>
      named(ctx, await configHistory(ctx.store, input.projectId ? projectConfigStream(input.projectId) : SERVER_CONFIG_STREAM)),
    ),
  configureProject: operatorProcedure
    .input(ZConfigureProjectInput)
    .mutation(({ ctx, input }) => configureProject(ctx, input, actorOf(ctx.user), { role: ctx.user.role })),
  configureServer: adminProcedure.input(ZConfigureServerInput).mutation(({ ctx, input }) => configureServer(ctx, input, actorOf(ctx.user))),
  revert: operatorProcedure
    .input(ZRevertInput)
    .mutation(({ ctx, input }) => revertChange(ctx, input, actorOf(ctx.user), { role: ctx.user.role })),
  /** A project's roles, who plays each, and its workflows' readiness (the role pickers' page). */
  roles: operatorProcedure
    .input(z.object({ projectId: z.string().min(1).max(100) }))
    .query(({ ctx, input }) => projectRoles({ ...ctx, runnerShells: () => liveRunnerShells(ctx) }, input.projectId)),
  /** A role picker's Check: the agent judged as a save would, then its brain, CLI or command checked. */
  checkRole: operatorProcedure
    .input(ZCheckRoleInput)
    .mutation(({ ctx, input }) => checkRoleAgent({ ...ctx, runnerShells: () => liveRunnerShells(ctx) }, input)),
  /** The delivery settings' Test, run here in the web server with its environment (docs/delivery.md). */
  testDelivery: operatorProcedure.input(ZTestDeliveryInput).mutation(({ ctx, input }) => testDelivery(ctx, input)),
  shells: operatorProcedure.query(({ ctx }) => shellsOverview(ctx.pool)),
  brains: operatorProcedure.query(({ ctx }) => brainsOverview(ctx.pool)),
  checkBrain: operatorProcedure
    .input(ZCheckBrainInput)
    .mutation(({ ctx, input }) => checkConfiguredBrain(ctx, input, { asAdmin: ctx.user.role === "admin" })),
  workflows: viewerProcedure.query(({ ctx }) => workflowsOverview(ctx.pool)),
});
