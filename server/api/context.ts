// The tRPC context: who is calling (session cookie or API token, see server/auth/request.ts)
// and the dependencies procedures pass to domain functions. Built per request by the route
// (server/api/web.ts wires the web process's pool); tests build it directly.
import type { Db } from "../db/pool";
import type { PrismaClient } from "../db/generated/client";
import type { EventStore } from "../events/store";
import { requestAuthenticator, type CurrentUser } from "../auth/request";
import { TRPCError } from "@trpc/server";
import { isAppError } from "../errors";
import { unavailableFrom } from "./errors";

export interface ApiDeps {
  prisma: PrismaClient;
  pool: Db;
  store: EventStore;
}

export interface Context extends ApiDeps {
  user: CurrentUser | null;
  /**
   * Who the request's credentials name now (a long-lived stream asks again: a token revoked
   * or a user disabled since it began ends it). Without it, the user is read again by id.
   */
  principal?: () => Promise<CurrentUser | null>;
  /** NEXTAUTH_SECRET, the key material webhook secrets are sealed with (server/intake/secret.ts); absent, none can be set. */
  sealingKey?: string;
}

export interface ContextSource {
  deps: ApiDeps;
  /** NEXTAUTH_SECRET, to read the session cookie. */
  secret: string | undefined;
}

export function createContextFactory(source: () => ContextSource) {
  return async function createContext({ req }: { req: Request }): Promise<Context> {
    const { deps, secret } = source();
    try {
      const principal = requestAuthenticator(req, { prisma: deps.prisma, secret });
      const user = await principal();
      return {
        ...deps,
        user,
        principal,
        ...(secret ? { sealingKey: secret } : {}),
      };
    } catch (err) {
      // Signing in needs the database: when it is away, a retryable 503 rather than a 500.
      const mapped = unavailableFrom(err);
      if (isAppError(mapped, "UNAVAILABLE")) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: mapped.message, cause: mapped });
      throw err;
    }
  };
}
