// The environments `npm start` gives its children. The web server gets NEXTAUTH_SECRET (it
// signs sessions with it); the runner does not: it never signs or reads a session, and a
// process's environment stays readable in /proc/<pid>/environ for its whole life by anything
// running as the same user (an agent where the sandbox is off, docs/security.md). Neither
// gets ADMIN_PASSWORD: the admin is set up before they start (server/auth/bootstrap.ts).
import { WEB_ONLY_SECRET_ENV } from "../../server/process/env";

export interface ChildEnvSettings {
  databaseUrl: string;
  nextauthSecret: string;
  nextauthUrl: string;
  runId: string;
  dataDir: string;
  workspacesDir: string;
  /** Variables of the start script's own that no child needs (the front process's pid). */
  drop?: readonly string[];
}

export interface ChildEnvironments {
  /** The web server's, also `next build`'s. */
  web: NodeJS.ProcessEnv;
  runner: NodeJS.ProcessEnv;
}

export function childEnvironments(base: NodeJS.ProcessEnv, settings: ChildEnvSettings): ChildEnvironments {
  const shared: NodeJS.ProcessEnv = {
    ...base,
    DATABASE_URL: settings.databaseUrl,
    NEXTAUTH_URL: settings.nextauthUrl,
    NEXT_TELEMETRY_DISABLED: "1",
    CATCAFE_RUN_ID: settings.runId,
    CATCAFE_DATA_DIR: settings.dataDir,
    CATCAFE_WORKSPACES_DIR: settings.workspacesDir,
  };
  for (const name of settings.drop ?? []) delete shared[name];
  delete shared.ADMIN_PASSWORD;
  const runner = { ...shared };
  for (const name of WEB_ONLY_SECRET_ENV) delete runner[name];
  return { web: { ...shared, NEXTAUTH_SECRET: settings.nextauthSecret }, runner };
}
