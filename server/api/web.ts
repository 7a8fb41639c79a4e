// The web process's wiring of the API: its pool, Prisma client and event store, the tRPC
// context, the REST handlers, the MCP endpoint and next-auth's options. Server-only: imported
// by routes and pages, never by tests (which pass their own dependencies to the factories).
import "server-only";
import { authEnv } from "../auth/env";
import { createAuthOptions } from "../auth/options";
import { getPrisma } from "../db/prisma";
import { getWebPool } from "../db/web-pool";
import { createAppEventStore } from "../app-store";
import type { EventStore } from "../events/store";
import { createContextFactory, type ContextSource } from "./context";
import { createHookHandlers } from "./hooks";
import { createMcpHandlers } from "./mcp";
import {
  createAgentRecordHandler,
  createModeRestHandlers,
  createSessionExportHandler,
  createSessionStateHandler,
  createTaskRestHandlers,
} from "./rest";

const cache = globalThis as typeof globalThis & { __catcafeEventStore?: EventStore };

function webSource(): ContextSource {
  const pool = getWebPool();
  cache.__catcafeEventStore ??= createAppEventStore(pool);
  return { deps: { pool, prisma: getPrisma(), store: cache.__catcafeEventStore }, secret: authEnv().NEXTAUTH_SECRET };
}

export const createContext = createContextFactory(webSource);

export const taskRestHandlers = createTaskRestHandlers(webSource);
export const modeRestHandlers = createModeRestHandlers(webSource);

export const sessionExportHandler = createSessionExportHandler(webSource);
export const sessionStateHandler = createSessionStateHandler(webSource);
export const agentRecordHandler = createAgentRecordHandler(webSource);

export const mcpHandlers = createMcpHandlers(webSource);

export const hookHandlers = createHookHandlers(webSource);

export const authOptions = createAuthOptions({ prisma: getPrisma, env: authEnv() });
