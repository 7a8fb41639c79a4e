// The webhook receivers (`POST /api/hooks/github`, `POST /api/hooks/gitlab`; docs/intake.md):
// the body is read up to MAX_BODY_BYTES (more: 413), the delivery's repository names the
// projects whose intake rules are for it, and one of their secrets must verify it (else 401,
// nothing recorded). A delivery id seen before answers `{ignored: "replayed"}` and records
// nothing more (a review that made a follow-up answers as it did the first time): its row
// (provider, delivery id) is inserted in the transaction that records what the delivery does.
// Issue events go to ./start.ts, pull-request events to routePullRequestDelivery.
import crypto from "node:crypto";
import type { Db } from "../db/pool";
import { logger } from "../log";
import { ZIntakeSettings, type IntakeSettings } from "../config/schemas";
import { githubDelivery, gitlabDelivery, type TrackerDelivery } from "./payloads";
import { recordedFollowUp } from "../tracker/review-follow-ups";
import { routePullRequestDelivery } from "./pull-requests";
import type { IntakeProvider } from "./rules";
import { webhookSecret, type SealingKey } from "./secret";
import { ZHeldRef } from "./inbox";
import { handleIssueDelivery, recordDelivery, wasDelivered, type IntakeDeps } from "./start";
import { isSigned, verifiedBy } from "./verify";

/** A delivery's body is read up to this many bytes (GitHub caps issue bodies at 65,536 characters). */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface ReceiverDeps extends IntakeDeps {
  key: SealingKey;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store" } });

const refused = (status: number, message: string) => json(status, { error: { message } });

/** The body as text, or null when it is longer than `limit` bytes (read no further). */
async function readCapped(request: Request, limit: number): Promise<string | null> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) return null;
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const HEADERS: Record<IntakeProvider, { id: string; event: string }> = {
  github: { id: "x-github-delivery", event: "x-github-event" },
  gitlab: { id: "idempotency-key", event: "x-gitlab-event" },
};

/**
 * What names a delivery, so that one sent again is recognised (docs/intake.md, "Replays" and
 * "Add the webhook on GitLab"). GitHub: `X-GitHub-Delivery`, which a redelivery keeps. GitLab:
 * `Idempotency-Key` (GitLab 17.4 on), one per hook and event and kept by every retry and by
 * "Resend request". An older GitLab sends `X-Gitlab-Event-UUID`, which its automatic retries
 * keep but which every hook fired by one event shares, and one older still sends neither (then
 * the body's SHA-256: a retry sends the same bytes): either is taken within the project whose
 * secret verified the delivery, so that two projects' hooks on one repository are two deliveries.
 */
function deliveryIdOf(provider: IntakeProvider, headers: Headers, raw: string): { id: string | null; header: string; perProject: boolean } {
  if (provider === "github") return { id: headers.get(HEADERS.github.id), header: HEADERS.github.id, perProject: false };
  const key = headers.get(HEADERS.gitlab.id);
  if (key) return { id: key, header: HEADERS.gitlab.id, perProject: false };
  const event = headers.get("x-gitlab-event-uuid") ?? `sha256:${crypto.createHash("sha256").update(raw).digest("hex")}`;
  return { id: event, header: "x-gitlab-event-uuid", perProject: true };
}

/** A delivery id, a project's prefix included, fits what the inbox takes (ZHeldRef). */
const MAX_DELIVERY_ID = ZHeldRef.shape.deliveryId.maxLength ?? 200;
const MAX_PROJECT_ID = ZHeldRef.shape.projectId.maxLength ?? 100;

/** The projects whose intake rules name this repository (GitLab: its path or its numeric id). */
async function candidates(db: Db, provider: IntakeProvider, repository: string, projectNumber?: number) {
  const r = await db.query<{ id: string; intake: unknown }>(
    `SELECT id, settings->'intake' AS intake FROM projects
     WHERE settings->'intake'->>'provider' = $1
       AND (lower(settings->'intake'->>'repository') = lower($2) OR settings->'intake'->>'repository' = $3)
     ORDER BY id`,
    [provider, repository, projectNumber !== undefined ? String(projectNumber) : null],
  );
  return r.rows.flatMap((row) => {
    const rules = ZIntakeSettings.safeParse(row.intake);
    return rules.success ? [{ projectId: row.id, rules: rules.data }] : [];
  });
}

export async function receiveDelivery(deps: ReceiverDeps, provider: IntakeProvider, request: Request): Promise<Response> {
  if (!isSigned(provider, request.headers))
    return refused(401, provider === "github" ? "unsigned delivery: X-Hub-Signature-256 is missing" : "X-Gitlab-Token is missing");
  const raw = await readCapped(request, MAX_BODY_BYTES);
  if (raw === null) return refused(413, `a delivery is at most ${MAX_BODY_BYTES} bytes`);
  let payload: unknown;
  try {
    payload = JSON.parse(raw);
  } catch {
    return refused(400, "the body is not JSON (set the webhook's content type to application/json)");
  }
  const presented = deliveryIdOf(provider, request.headers, raw);
  const eventHeader = request.headers.get(HEADERS[provider].event);
  const objectKind = (payload as { object_kind?: unknown } | null)?.object_kind;
  const event = provider === "gitlab" && typeof objectKind === "string" ? objectKind : eventHeader;
  const idRoom = presented.perProject ? MAX_DELIVERY_ID - MAX_PROJECT_ID - 1 : MAX_DELIVERY_ID;
  if (!presented.id || presented.id.length > idRoom) return refused(400, `${presented.header} is required (at most ${idRoom} characters)`);
  if (!event || event.length > 100) return refused(400, `${HEADERS[provider].event} is required (at most 100 characters)`);
  const delivery: TrackerDelivery = provider === "github" ? githubDelivery(event, payload) : gitlabDelivery(payload);
  if (!delivery.repository) return refused(401, "the delivery names no repository this server takes deliveries from");
  // The project whose secret verifies the delivery: a secret that does not says nothing about which.
  let project: { projectId: string; rules: IntakeSettings } | null = null;
  for (const c of await candidates(deps.pool, provider, delivery.repository, delivery.projectNumber)) {
    const secret = await webhookSecret(deps.pool, deps.key, c.projectId);
    if (secret && (await verifiedBy(provider, secret, raw, request.headers))) {
      project = c;
      break;
    }
  }
  if (!project) return refused(401, "the signature does not verify for any project taking deliveries from this repository");
  const deliveryId = presented.perProject ? `${project.projectId}:${presented.id}` : presented.id;
  const log = logger.child({ provider, deliveryId, event, projectId: project.projectId });
  const ref = { provider, deliveryId, projectId: project.projectId, event };
  if (event === "ping") return json(200, { pong: true });
  if (await wasDelivered(deps.pool, provider, deliveryId)) {
    // A review that made a follow-up answers a replay as it answered the delivery (the follow-up's own record).
    const followedUp = delivery.kind === "pull_request" ? await recordedFollowUp(deps.pool, provider, deliveryId) : null;
    return json(200, followedUp ?? { ignored: "replayed" });
  }
  if (delivery.kind === "pull_request") {
    const answer = await routePullRequestDelivery(deps, { ...ref, payload });
    log.info({ answer }, "pull-request delivery");
    return json(200, answer);
  }
  if (delivery.kind === "other") {
    if (!(await recordDelivery(deps.pool, ref, "ignored"))) return json(200, { ignored: "replayed" });
    return json(200, { ignored: "event" });
  }
  const answer = await handleIssueDelivery(deps, { ...ref, rules: project.rules, delivery });
  log.info({ answer }, "issue delivery");
  return json(200, answer);
}
