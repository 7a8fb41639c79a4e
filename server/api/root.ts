// The application's tRPC router. `AppRouter` is the type clients (browser, CLI) import.
import { authRouter } from "./routers/auth";
import { projectsRouter } from "./routers/projects";
import { runnersRouter } from "./routers/runners";
import { sessionsRouter } from "./routers/sessions";
import { tasksRouter } from "./routers/tasks";
import { tokensRouter } from "./routers/tokens";
import { usersRouter } from "./routers/users";
import { createCallerFactory, router } from "./trpc";

export const appRouter = router({
  auth: authRouter,
  tasks: tasksRouter,
  sessions: sessionsRouter,
  projects: projectsRouter,
  runners: runnersRouter,
  tokens: tokensRouter,
  users: usersRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
