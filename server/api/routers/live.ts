// The session view's API (viewer role): the first paint (`live.session`), live updates
// over Server-Sent Events (`live.updates`, fed by the web process's one LISTEN connection),
// earlier entries on demand (`live.older`, "Load older") and a large output opened on
// demand (`live.output`). Thin: server/sessions/view does the work.
import { tracked, TRPCError } from "@trpc/server";
import { hasRole } from "../../../lib/roles";
import { resolveUser } from "../../auth/users";
import { z } from "zod";
import { followSession } from "../../sessions/view/follow";
import { sessionEventsListener } from "../../sessions/view/listener";
import { DEFAULT_ENTRY_LIMIT, loadOlderEntries, loadSessionView } from "../../sessions/view/load";
import { PAGE_ENTRY_LIMIT } from "../../sessions/view/pages";
import { OUTPUT_DEFAULT_BYTES, OUTPUT_MAX_BYTES, readSessionOutput } from "../../sessions/view/output";
import { MAX_VERSION, ZVersion } from "../../events/versions";
import { router, viewerProcedure } from "../trpc";

const ZSessionId = z.string().min(1).max(100);

export const ZSessionViewInput = z.object({
  sessionId: ZSessionId,
  /** The latest entries to include; earlier ones are counted in `omitted`. */
  limit: z.number().int().min(1).max(5000).default(DEFAULT_ENTRY_LIMIT),
});

export const ZSessionUpdatesInput = z.object({
  sessionId: ZSessionId,
  /** Send entries after this version (the `status.version` of `live.session`). */
  afterVersion: ZVersion.default(0),
  /** Set by the tRPC client when it reconnects: the version of the last batch it received. */
  lastEventId: z
    .string()
    .regex(/^\d{1,10}$/)
    .refine((v) => Number(v) <= MAX_VERSION, "beyond any version")
    .nullish(),
});

export const ZOlderEntriesInput = z.object({
  sessionId: ZSessionId,
  /** The version of the earliest entry the page has: entries before it are read. */
  beforeVersion: z.number().int().min(1).max(2_147_483_647),
  limit: z.number().int().min(1).max(1000).default(PAGE_ENTRY_LIMIT),
});

export const ZSessionOutputInput = z.object({
  sessionId: ZSessionId,
  blob: z.string().regex(/^[0-9a-f]{64}$/, "a blob hash (64 hex digits)"),
  maxBytes: z.number().int().min(1).max(OUTPUT_MAX_BYTES).default(OUTPUT_DEFAULT_BYTES),
});

export const liveRouter = router({
  session: viewerProcedure
    .input(ZSessionViewInput)
    .query(({ ctx, input }) => loadSessionView(ctx, input.sessionId, { limit: input.limit })),

  updates: viewerProcedure.input(ZSessionUpdatesInput).subscription(async function* ({ ctx, input, signal }) {
    const after = input.lastEventId ? Number(input.lastEventId) : input.afterVersion;
    const user = ctx.user;
    const principal = ctx.principal ?? (async () => (user ? await resolveUser(ctx.prisma, user.id) : null));
    for await (const batch of followSession(ctx, sessionEventsListener(ctx.pool), input.sessionId, after, signal)) {
      // Every batch is sent to whoever the credentials name now: a token revoked, a user
      // disabled or demoted since the stream began ends it.
      const now = await principal();
      if (!now || !hasRole(now.role, "viewer")) {
        throw new TRPCError({
          code: "UNAUTHORIZED",
          message: "the credentials of this stream are no longer valid (revoked, disabled or signed out)",
        });
      }
      yield tracked(String(batch.version), batch);
    }
  }),

  older: viewerProcedure
    .input(ZOlderEntriesInput)
    .query(({ ctx, input }) => loadOlderEntries(ctx, input.sessionId, input.beforeVersion, input.limit)),

  output: viewerProcedure
    .input(ZSessionOutputInput)
    .query(({ ctx, input }) => readSessionOutput(ctx.pool, input.sessionId, input.blob, input.maxBytes)),
});
