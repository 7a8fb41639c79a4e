// REST aliases of the task procedures (req W9): same domain functions, same sign-in (session
// cookie or `Authorization: Bearer <token>`), same role (operator), JSON in and out. Errors
// are `{ error: { code, message, fieldErrors? } }` with the status of server/errors.ts.
import { z } from "zod";
import { hasRole } from "../../lib/roles";
import { authenticateRequest, type CurrentUser } from "../auth/request";
import { AppError, RETRY_AFTER_SECONDS } from "../errors";
import { logger } from "../log";
import {
  cancelTask,
  confirmTask,
  followUpTask,
  startTask,
  ZCancelInput,
  ZConfirmInput,
  ZFollowUpInput,
  ZSessionRef,
  ZStartTaskInput,
} from "../tasks/commands";
import { releaseOrphanedLease } from "../runner/liveness";
import { modifySession, rerunTask, revertSession, ZForkInput, ZModifyInput, ZRevertInput } from "../tasks/fork";
import { resumeSession, ZResumeInput } from "../tasks/resume";
import type { ContextSource } from "./context";
import { forkAnySession } from "./fork";
import { deliverSession, ZDeliverRequest } from "../delivery/service";
import { judgeBakeOff, ZJudgeInput } from "../bake-off/judge";
import { dismissBakeOff, pickWinner, ZDismissInput, ZPickInput } from "../bake-off/pick";
import { getMode, setMode, ZSetModeInput } from "../conversations/service";
import { listModes } from "../modes/registry";
import { exportArchive, exportSession } from "../export";
import { readSessionState } from "../sessions/state-document";
import { sessionUsage } from "../usage/totals";
import { agentRecord } from "../agent-record/record";
import { fileSettings } from "../projects/config-edits";
import { userNames } from "../auth/users";
import { retryAfterOf, toRestError } from "./errors";
import { crossSiteRefusal } from "./csrf";
import { idempotent } from "./idempotency";
import { unstorableText } from "./text-input";
import { inSpan, markFailed } from "../tracing/spans";
import { actorOf, toldTracker } from "./routers/tasks";

const NO_STORE = { "Cache-Control": "no-store" };

export interface TaskRouteContext {
  params: Promise<{ id: string }>;
}

type Handler<C> = (req: Request, route: C) => Promise<Response>;

/** Who sent `req`, looked up once per request (the idempotency key and the role check both ask). */
const requestUsers = new WeakMap<Request, Promise<CurrentUser | null>>();
function requestUser(req: Request, source: ContextSource): Promise<CurrentUser | null> {
  let user = requestUsers.get(req);
  if (!user) requestUsers.set(req, (user = authenticateRequest(req, { prisma: source.deps.prisma, secret: source.secret })));
  return user;
}

async function requireRole(req: Request, source: ContextSource, role: "viewer" | "operator"): Promise<CurrentUser> {
  const user = await requestUser(req, source);
  if (!user) throw new AppError("UNAUTHORIZED", "sign in, or send an API token as `Authorization: Bearer ...`");
  if (!hasRole(user.role, role)) throw new AppError("FORBIDDEN", `this needs the ${role} role (you are ${user.role})`);
  return user;
}

/** The JSON object body; an empty body is `{}`. */
async function readBody(req: Request): Promise<Record<string, unknown>> {
  const text = await req.text();
  if (!text.trim()) return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError("INVALID_INPUT", "the request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new AppError("INVALID_INPUT", "the request body must be a JSON object");
  const bad = unstorableText(body);
  if (bad) throw new AppError("INVALID_INPUT", `${bad.path}: ${bad.problem}`);
  return body as Record<string, unknown>;
}

/** Any error as the API's JSON error answer, with the headers its status calls for. */
export function errorResponse(err: unknown, route: string): Response {
  const { status, body, internal } = toRestError(err);
  if (internal) logger.error({ err, route }, "REST handler failed");
  const headers: Record<string, string> = { ...NO_STORE };
  if (status === 401) headers["WWW-Authenticate"] = 'Bearer realm="catcafe"';
  if (status === 503 || retryAfterOf(err) !== null) headers["Retry-After"] = String(RETRY_AFTER_SECONDS);
  return Response.json(body, { status, headers });
}

/**
 * A route's handler: `run`'s answer as JSON, any error in the API's error shape; a request
 * that changes something and carries an `Idempotency-Key` is carried out once per key
 * (./idempotency.ts), for the user who sent it.
 */
function respond<C>(
  source: () => ContextSource,
  name: string,
  run: (req: Request, route: C) => Promise<{ status: number; body: unknown }>,
): Handler<C> {
  const answer = async (req: Request, route: C) => {
    try {
      const { status, body } = await run(req, route);
      return Response.json(body, { status, headers: NO_STORE });
    } catch (err) {
      return errorResponse(err, name);
    }
  };
  const handle = async (req: Request, route: C) => {
    try {
      // CSRF (docs/auth.md): refused before the sign-in, the key's claim and the command.
      const crossSite = crossSiteRefusal(req);
      if (crossSite) throw crossSite;
      const ctx = source();
      const user = req.method === "GET" ? null : await requestUser(req, ctx);
      return user ? await idempotent(ctx.deps.pool, req, user.id, (r) => answer(r, route)) : await answer(req, route);
    } catch (err) {
      return errorResponse(err, name);
    }
  };
  // A command is the root of its trace, as over tRPC (docs/operations.md, "Traces").
  return (req, route) =>
    req.method === "GET"
      ? handle(req, route)
      : inSpan(`command ${name}`, { attributes: { "http.request.method": req.method, "http.route": name } }, async (span) => {
          const response = await handle(req, route);
          span.setAttribute("http.response.status_code", response.status);
          if (response.status >= 400) markFailed(span, null, String(response.status));
          return response;
        });
}

/** GET /api/sessions/:id/export → the session in the export layout (req E8), as a zip (viewer). */
export function createSessionExportHandler(source: () => ContextSource): Handler<TaskRouteContext> {
  return async (req, route) => {
    try {
      const ctx = source();
      const user = await requireRole(req, ctx, "viewer");
      const { id } = await route.params;
      const sessionId = ZSessionRef.parse({ sessionId: id }).sessionId;
      const audience = user.role === "viewer" ? "viewer" : "member";
      const names = (labels: string[]) => userNames(ctx.deps.prisma, labels);
      const zip = exportArchive(
        await exportSession(ctx.deps.store, ctx.deps.pool, sessionId, { audience, pricing: fileSettings().pricing, names }),
      );
      return new Response(new Uint8Array(zip), {
        status: 200,
        headers: { ...NO_STORE, "Content-Type": "application/zip", "Content-Disposition": `attachment; filename="${sessionId}.zip"` },
      });
    } catch (err) {
      return errorResponse(err, "GET /api/sessions/:id/export");
    }
  };
}

/** GET /api/sessions/:id/state → 200 the session's state document (req M10; `sessions.state`, viewer). */
export function createSessionStateHandler(source: () => ContextSource): Handler<TaskRouteContext> {
  return respond<TaskRouteContext>(source, "GET /api/sessions/:id/state", async (req, route) => {
    const ctx = source();
    await requireRole(req, ctx, "viewer");
    const { id } = await route.params;
    const bad = unstorableText(id);
    if (bad) throw new AppError("INVALID_INPUT", `the session id in the path ${bad.problem}`);
    const { sessionId } = ZSessionRef.parse({ sessionId: id });
    const usageOf = (id: string) => sessionUsage(ctx.deps.pool, id, fileSettings().pricing);
    return { status: 200, body: await readSessionState(ctx.deps, sessionId, usageOf) };
  });
}

/** GET /api/projects/:id/agent-record?since=&until= → 200 the project's agent record (`agentRecord.stats`, viewer; docs/bake-off.md). */
export function createAgentRecordHandler(source: () => ContextSource): Handler<TaskRouteContext> {
  return respond<TaskRouteContext>(source, "GET /api/projects/:id/agent-record", async (req, route) => {
    const ctx = source();
    await requireRole(req, ctx, "viewer");
    const { id } = await route.params;
    const bad = unstorableText(id);
    if (bad) throw new AppError("INVALID_INPUT", `the project id in the path ${bad.problem}`);
    const query = new URL(req.url).searchParams;
    const input = {
      projectId: id,
      ...(query.get("since") ? { since: query.get("since")! } : {}),
      ...(query.get("until") ? { until: query.get("until")! } : {}),
    };
    return { status: 200, body: await agentRecord(ctx.deps, input, fileSettings().pricing) };
  });
}

export function createTaskRestHandlers(source: () => ContextSource) {
  const withTask = <S extends z.ZodType>(
    schema: S,
    name: string,
    act: (deps: ContextSource["deps"], input: z.output<S>, user: CurrentUser) => Promise<{ status: number; body: unknown }>,
  ) =>
    respond<TaskRouteContext>(source, name, async (req, route) => {
      const ctx = source();
      const user = await requireRole(req, ctx, "operator");
      const { id } = await route.params;
      const bad = unstorableText(id);
      if (bad) throw new AppError("INVALID_INPUT", `the session id in the path ${bad.problem}`);
      // The path names the session; the body cannot override it.
      const input = schema.parse({ ...(await readBody(req)), sessionId: id });
      return act(ctx.deps, input, user);
    });

  return {
    /** POST /api/tasks/:id/followup `{ text }` → 200 `{ sessionId, version }` */
    followUp: withTask(ZFollowUpInput, "POST /api/tasks/:id/followup", async (deps, input, user) => ({
      status: 200,
      body: await followUpTask(deps, input, actorOf(user)),
    })),
    /** POST /api/tasks/:id/rerun → 201 `{ sessionId, parentId }` (a fork of the original) */
    rerun: withTask(ZSessionRef, "POST /api/tasks/:id/rerun", async (deps, input, user) => {
      const { sessionId, parentId } = await rerunTask(deps, input, actorOf(user));
      return { status: 201, body: { sessionId, parentId } };
    }),
    /** POST /api/tasks/:id/confirm `{ via? }` → 200 `{ sessionId, version }` */
    confirm: withTask(ZConfirmInput, "POST /api/tasks/:id/confirm", async (deps, input, user) => ({
      status: 200,
      body: await toldTracker(deps, confirmTask(deps, input, actorOf(user))),
    })),
    /** POST /api/tasks/:id/cancel `{ reason? }` → 200 `{ sessionId, version }` */
    cancel: withTask(ZCancelInput, "POST /api/tasks/:id/cancel", async (deps, input, user) => ({
      status: 200,
      body: await toldTracker(deps, cancelTask(deps, input, actorOf(user))),
    })),
    /** POST /api/sessions/:id/fork `{ atVersion, reason?, note? }` → 201 `{ sessionId, parentId, atVersion, version }` */
    fork: withTask(ZForkInput, "POST /api/sessions/:id/fork", async (deps, input, user) => ({
      status: 201,
      body: await forkAnySession(deps, input, actorOf(user)),
    })),
    /** POST /api/sessions/:id/revert `{ to, iteration?, note? }` → 201 `{ sessionId, parentId, atVersion, version, to }` */
    revert: withTask(ZRevertInput, "POST /api/sessions/:id/revert", async (deps, input, user) => ({
      status: 201,
      body: await revertSession(deps, input, actorOf(user)),
    })),
    /** POST /api/sessions/:id/modify `{ change, note? }` → 201 `{ sessionId, parentId, atVersion, version }` */
    modify: withTask(ZModifyInput, "POST /api/sessions/:id/modify", async (deps, input, user) => ({
      status: 201,
      body: await modifySession(deps, input, actorOf(user)),
    })),
    /** POST /api/sessions/:id/deliver → 202 `{ sessionId, stepId, method, branch, version }` (a runner delivers) */
    deliver: withTask(ZDeliverRequest, "POST /api/sessions/:id/deliver", async (deps, input, user) => ({
      status: 202,
      body: await deliverSession(deps, input, actorOf(user), { publicUrl: process.env.NEXTAUTH_URL }),
    })),
    /** POST /api/sessions/:id/bake-off/judge `{ judge? }` → 202 `{ sessionId, stepId, agentId }` (a runner asks the judge) */
    bakeOffJudge: withTask(ZJudgeInput, "POST /api/sessions/:id/bake-off/judge", async (deps, input, user) => ({
      status: 202,
      body: await judgeBakeOff(deps, input, actorOf(user)),
    })),
    /** POST /api/sessions/:id/bake-off/pick `{ contenderId, reason? }` → 200 `{ sessionId, contenderId, winnerSessionId, delivery, … }` */
    bakeOffPick: withTask(ZPickInput, "POST /api/sessions/:id/bake-off/pick", async (deps, input, user) => ({
      status: 200,
      body: await pickWinner(deps, input, actorOf(user)),
    })),
    /** POST /api/sessions/:id/bake-off/dismiss `{ reason? }` → 200 `{ sessionId, notChosen }` */
    bakeOffDismiss: withTask(ZDismissInput, "POST /api/sessions/:id/bake-off/dismiss", async (deps, input, user) => ({
      status: 200,
      body: await dismissBakeOff(deps, input, actorOf(user)),
    })),
    /** POST /api/sessions/:id/resume `{ budget? }` → 200 `{ sessionId, status, message, version }` */
    resume: withTask(ZResumeInput, "POST /api/sessions/:id/resume", async (deps, input, user) => ({
      status: 200,
      body: await resumeSession({ ...deps, lease: (stepId) => releaseOrphanedLease(deps.pool, stepId) }, input, actorOf(user)),
    })),
    /** POST /api/tasks `{ projectId, prompt, mode, workflow? }` → 201 `{ sessionId, version }` */
    start: respond<unknown>(source, "POST /api/tasks", async (req) => {
      const ctx = source();
      const user = await requireRole(req, ctx, "operator");
      const input = ZStartTaskInput.parse(await readBody(req));
      return { status: 201, body: await startTask(ctx.deps, input, actorOf(user)) };
    }),
  };
}

/**
 * The collaboration-mode endpoints (req C7): `GET /api/modes` (viewer),
 * `GET /api/sessions/:id/mode` (viewer) and `PUT /api/sessions/:id/mode` `{ mode, modeConfig? }`
 * (operator) → `{ mode, description }`. A session that is not a conversation is a 404.
 */
export function createModeRestHandlers(source: () => ContextSource) {
  const sessionIdOf = async (route: TaskRouteContext) => {
    const { id } = await route.params;
    const bad = unstorableText(id);
    if (bad) throw new AppError("INVALID_INPUT", `the session id in the path ${bad.problem}`);
    return id;
  };
  return {
    listModes: respond<unknown>(source, "GET /api/modes", async (req) => {
      await requireRole(req, source(), "viewer");
      return { status: 200, body: listModes() };
    }),
    getSessionMode: respond<TaskRouteContext>(source, "GET /api/sessions/:id/mode", async (req, route) => {
      const ctx = source();
      await requireRole(req, ctx, "viewer");
      return { status: 200, body: await getMode(ctx.deps, await sessionIdOf(route)) };
    }),
    setSessionMode: respond<TaskRouteContext>(source, "PUT /api/sessions/:id/mode", async (req, route) => {
      const ctx = source();
      const user = await requireRole(req, ctx, "operator");
      const input = ZSetModeInput.parse({ ...(await readBody(req)), sessionId: await sessionIdOf(route) });
      return { status: 200, body: await setMode(ctx.deps, input, actorOf(user)) };
    }),
  };
}
