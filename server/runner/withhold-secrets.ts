// The runner process's first import (./main.ts), so it runs before any other module reads the
// environment: NEXTAUTH_SECRET and ADMIN_PASSWORD are the web server's, and a runner started
// with them (`npm run runner` from a shell that has them) takes them out of process.env, so
// none of its code reads them and nothing it starts inherits them (docs/security.md). Their
// values are kept for one use only: agent and test output is still scanned for them before it
// is recorded (req N4), as it is for the secret `npm start` generated (the data directory's
// secrets.json, when this runner's user may read it), which `npm start` never passes to a runner.
import { readLocalSecrets } from "../db/local";
import { WEB_ONLY_SECRET_ENV, withholdServerSecrets, type ServerSecretName } from "../process/env";

/** The web server's secrets this runner was started with: main.ts says so once it can log. */
export const withheldAtStart: readonly ServerSecretName[] = withholdServerSecrets(WEB_ONLY_SECRET_ENV, {
  alsoRedact: { NEXTAUTH_SECRET: readLocalSecrets()?.nextauthSecret },
});
