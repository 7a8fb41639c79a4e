// The application's tRPC router. `AppRouter` is the type clients (browser, CLI) import.
import { agentRecordRouter } from "./routers/agent-record";
import { authRouter } from "./routers/auth";
import { bakeOffViewRouter } from "./routers/bake-off-view";
import { bakeOffsRouter } from "./routers/bake-offs";
import { conversationsRouter, modesRouter } from "./routers/conversations";
import { forgeRouter } from "./routers/forge";
import { inboxRouter } from "./routers/inbox";
import { intakeRouter } from "./routers/intake";
import { invitationsRouter } from "./routers/invitations";
import { lineageRouter } from "./routers/lineage";
import { liveRouter } from "./routers/live";
import { opsRouter } from "./routers/ops";
import { projectsRouter } from "./routers/projects";
import { replayRouter } from "./routers/replay";
import { runnersRouter } from "./routers/runners";
import { sessionsRouter } from "./routers/sessions";
import { settingsRouter } from "./routers/settings";
import { tasksRouter } from "./routers/tasks";
import { tokensRouter } from "./routers/tokens";
import { usageRouter } from "./routers/usage";
import { usersRouter } from "./routers/users";
import { createCallerFactory, router } from "./trpc";

export const appRouter = router({
  auth: authRouter,
  tasks: tasksRouter,
  forge: forgeRouter,
  sessions: sessionsRouter,
  projects: projectsRouter,
  runners: runnersRouter,
  tokens: tokensRouter,
  users: usersRouter,
  invitations: invitationsRouter,
  live: liveRouter,
  ops: opsRouter,
  replay: replayRouter,
  lineage: lineageRouter,
  settings: settingsRouter,
  inbox: inboxRouter,
  intake: intakeRouter,
  conversations: conversationsRouter,
  modes: modesRouter,
  usage: usageRouter,
  bakeOffView: bakeOffViewRouter,
  agentRecord: agentRecordRouter,
  bakeOffs: bakeOffsRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
