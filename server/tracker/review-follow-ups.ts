// Review comments as follow-ups (docs/delivery.md, "Review comments"): a verified webhook delivery
// of a reviewer's text on a pull request a session's delivery opened becomes that session's next
// iteration, once per delivery id. GitHub: `pull_request_review` (changes requested, or a comment
// with a body) and `pull_request_review_comment` (created; inline, so with path:line). GitLab: a
// `note` on a merge request. The owner is the session whose delivery opened or last updated the
// pull request (DeliveryCompleted.pullRequest, same provider, repository and number). A finished
// owner is continued by a modify fork (a new iteration from its last commit, delivered onto the
// same pull request: docs/delivery.md, "Pull request"); a follow-up still running gets the text as
// a message. The bot's own comments (its user, CATCAFE_TRACKER_BOT_USER, and any comment carrying
// Cat Cafe's marker) are ignored, so Cat Cafe never answers itself.
import { z } from "zod";
import { parseEnv, ZTrackerEnv } from "../env";
import { logger } from "../log";
import { redactKnownSecrets } from "../redact";
import { looksLikeSecret, REDACTED } from "../config/secrets";
import { withTransaction, type Db } from "../db/pool";
import { commandHandler, lockStream, streamVersion } from "../events/command-handler";
import { timeOrderedId } from "../events/ids";
import type { EventStore } from "../events/store";
import type { NewEvent } from "../events/types";
import { ZFollowUpInput } from "../tasks/commands";
import { modifySession } from "../tasks/fork";
import { foldTask, taskCommands, taskDecision } from "../task-engine";
import { scheduleTrackerSteps, TRACKER_ACTOR } from "./schedule";

export interface ReviewFollowUpDeps {
  store: EventStore;
  pool: Db;
  /** The tracker user the token acts as: its comments are Cat Cafe's own (default: CATCAFE_TRACKER_BOT_USER). */
  botUser?: string;
  /** The dashboard's address for links (default: NEXTAUTH_URL). */
  publicUrl?: string;
}

/** What the webhook route answers. */
export type ReviewFollowUpAnswer =
  | { outcome: "followed_up"; sessionId: string; followUp: { sessionId: string; how: "modify" | "follow_up" } }
  | { outcome: "ignored"; reason: string };

/** A reviewer's text is cut to this many characters. */
export const MAX_REVIEW_TEXT = 10_000;

const ZUser = z.object({ login: z.string() });
const ZGitHubReview = z.object({
  action: z.string(),
  review: z.object({ state: z.string(), body: z.string().nullable(), user: ZUser.nullable() }),
  pull_request: z.object({ number: z.number().int().positive() }),
  repository: z.object({ full_name: z.string() }),
});
const ZGitHubReviewComment = z.object({
  action: z.string(),
  comment: z.object({ body: z.string(), path: z.string(), line: z.number().int().nullable().optional(), user: ZUser.nullable() }),
  pull_request: z.object({ number: z.number().int().positive() }),
  repository: z.object({ full_name: z.string() }),
});
const ZGitLabNote = z.object({
  object_kind: z.literal("note"),
  user: z.object({ username: z.string() }),
  project: z.object({ path_with_namespace: z.string() }),
  object_attributes: z.object({
    note: z.string(),
    noteable_type: z.string(),
    position: z
      .object({ new_path: z.string().nullable().optional(), new_line: z.number().int().nullable().optional() })
      .nullable()
      .optional(),
  }),
  merge_request: z.object({ iid: z.number().int().positive() }).optional(),
});

/** The reviewer's text, where it is, and who wrote it; or why the delivery is no review to follow up. */
type Review = { repository: string; number: number; author: string; text: string } | { ignored: string };

function githubReview(eventName: string, payload: unknown): Review {
  if (eventName === "pull_request_review") {
    const p = ZGitHubReview.safeParse(payload);
    if (!p.success) return { ignored: "not a pull_request_review payload" };
    const { review } = p.data;
    const state = review.state.toLowerCase();
    const body = review.body?.trim() ?? "";
    if (p.data.action !== "submitted") return { ignored: `a review ${p.data.action}, not submitted` };
    if (state !== "changes_requested" && !(state === "commented" && body)) return { ignored: `a review ${state} with nothing to change` };
    const what = state === "changes_requested" ? "requested changes" : "commented";
    return {
      repository: p.data.repository.full_name,
      number: p.data.pull_request.number,
      author: review.user?.login ?? "",
      text: `${review.user?.login ?? "A reviewer"} ${what} on pull request #${p.data.pull_request.number}:\n\n${body || "(no text)"}`,
    };
  }
  if (eventName === "pull_request_review_comment") {
    const p = ZGitHubReviewComment.safeParse(payload);
    if (!p.success) return { ignored: "not a pull_request_review_comment payload" };
    if (p.data.action !== "created") return { ignored: `a review comment ${p.data.action}, not created` };
    const { comment } = p.data;
    const where = `${comment.path}${comment.line ? `:${comment.line}` : ""}`;
    return {
      repository: p.data.repository.full_name,
      number: p.data.pull_request.number,
      author: comment.user?.login ?? "",
      text: `${comment.user?.login ?? "A reviewer"} commented on ${where}:\n\n${comment.body.trim()}`,
    };
  }
  return { ignored: `GitHub event ${eventName} is no review` };
}

function gitlabReview(eventName: string, payload: unknown): Review {
  const kind = (payload as { object_kind?: unknown } | null)?.object_kind;
  if (eventName === "Merge Request Hook" || kind === "merge_request")
    return { ignored: "a merge request update carries no reviewer's text: its comments (notes) are followed up" };
  if (eventName !== "Note Hook" && kind !== "note") return { ignored: `GitLab event ${eventName} is no review` };
  const p = ZGitLabNote.safeParse(payload);
  if (!p.success) return { ignored: "not a note payload" };
  const note = p.data.object_attributes;
  if (note.noteable_type !== "MergeRequest" || !p.data.merge_request)
    return { ignored: `a note on a ${note.noteable_type}, not a merge request` };
  const where = note.position?.new_path ? ` on ${note.position.new_path}${note.position.new_line ? `:${note.position.new_line}` : ""}` : "";
  return {
    repository: p.data.project.path_with_namespace,
    number: p.data.merge_request.iid,
    author: p.data.user.username,
    text: `${p.data.user.username} commented${where} on merge request !${p.data.merge_request.iid}:\n\n${note.note.trim()}`,
  };
}

/** Secrets taken out (the server's own, and anything shaped like a token), then cut to size. */
export function reviewText(text: string): string {
  const known = redactKnownSecrets(text).text;
  const scrubbed = known.replace(/\S+/g, (word) => (looksLikeSecret(word) ? REDACTED : word));
  return scrubbed.length > MAX_REVIEW_TEXT ? `${scrubbed.slice(0, MAX_REVIEW_TEXT)}\n… (cut)` : scrubbed;
}

const OWNER_SQL = `SELECT c.stream_id FROM events c
  JOIN events r ON r.stream_id = c.stream_id AND r.type = 'DeliveryRequested' AND r.data->>'stepId' = c.data->>'stepId'
  WHERE c.type = 'DeliveryCompleted' AND c.data->'pullRequest'->>'provider' = $1
    AND (c.data->'pullRequest'->>'number')::int = $2 AND r.data->'pullRequest'->>'repository' = $3
  ORDER BY c.position DESC LIMIT 1`;

const SEEN_SQL = `SELECT stream_id, data FROM events WHERE type = 'PullRequestFeedbackReceived' AND data->>'provider' = $1 AND data->>'deliveryId' = $2 LIMIT 1`;

/** The latest follow-up made of the pull request's reviews in the owner's stream, when it is still running. */
const RUNNING_FOLLOW_UP_SQL = `SELECT data->'followUp'->>'sessionId' AS session_id FROM events
  WHERE stream_id = $1 AND type = 'PullRequestFeedbackReceived' AND data->'followUp'->>'how' = 'modify'
  ORDER BY version DESC LIMIT 1`;

const feedbackRecords = commandHandler(streamVersion);

/**
 * Turns a verified webhook delivery of a review on a pull request into a follow-up of the session
 * that delivered it (see the top of this file); the same delivery id twice follows up once and
 * answers the same both times.
 */
export async function followUpFromPullRequestDelivery(
  deps: ReviewFollowUpDeps,
  provider: "github" | "gitlab",
  eventName: string,
  payload: unknown,
  deliveryId: string,
): Promise<ReviewFollowUpAnswer> {
  const review = provider === "github" ? githubReview(eventName, payload) : gitlabReview(eventName, payload);
  if ("ignored" in review) return { outcome: "ignored", reason: review.ignored };
  const bot = deps.botUser ?? parseEnv(ZTrackerEnv).CATCAFE_TRACKER_BOT_USER;
  if (bot && review.author.toLowerCase() === bot.toLowerCase())
    return { outcome: "ignored", reason: `a comment by Cat Cafe's own user ${bot}` };
  if (review.text.includes("<!-- catcafe:")) return { outcome: "ignored", reason: "a comment Cat Cafe wrote" };

  // One delivery id at a time (a session-level advisory lock, held on a connection of its own
  // while the follow-up is made in transactions of their own): a retried delivery waits for the
  // first, then finds its record.
  const lock = await deps.pool.connect();
  const key = `catcafe-pr-feedback:${provider}:${deliveryId}`;
  try {
    await lock.query("SELECT pg_advisory_lock(hashtext($1))", [key]);
    return await followUpOnce(deps, provider, eventName, review, deliveryId);
  } finally {
    await lock.query("SELECT pg_advisory_unlock(hashtext($1))", [key]).catch(() => {});
    lock.release();
  }
}

type Found = Exclude<Review, { ignored: string }>;

/** The follow-up a delivery id made, as it was answered; null when it made none. */
export async function recordedFollowUp(db: Db, provider: "github" | "gitlab", deliveryId: string): Promise<ReviewFollowUpAnswer | null> {
  const seen = await db.query<{ stream_id: string; data: { followUp: { sessionId: string; how: "modify" | "follow_up" } } }>(SEEN_SQL, [
    provider,
    deliveryId,
  ]);
  const row = seen.rows[0];
  return row ? { outcome: "followed_up", sessionId: row.stream_id, followUp: row.data.followUp } : null;
}

async function followUpOnce(
  deps: ReviewFollowUpDeps,
  provider: "github" | "gitlab",
  eventName: string,
  review: Found,
  deliveryId: string,
): Promise<ReviewFollowUpAnswer> {
  // The same delivery again: nothing done, the same answer.
  const seen = await recordedFollowUp(deps.pool, provider, deliveryId);
  if (seen) return seen;

  const owner = (await deps.pool.query<{ stream_id: string }>(OWNER_SQL, [provider, review.number, review.repository])).rows[0]?.stream_id;
  if (!owner) return { outcome: "ignored", reason: `no session delivered ${review.repository} #${review.number}` };
  const text = reviewText(review.text);

  // A follow-up of the reviews still running takes the text; else the owner (or its last follow-up) goes on.
  const running = (await deps.pool.query<{ session_id: string }>(RUNNING_FOLLOW_UP_SQL, [owner])).rows[0]?.session_id;
  const runningTask = running ? foldTask(await deps.store.readStream(running)) : null;
  const deps0 = { store: deps.store, pool: deps.pool };
  // The follow-up (the fork, or the message) and its record in one transaction: a process that
  // dies between the two leaves neither, so the delivery sent again makes one follow-up, not two.
  const followUp = await withTransaction(deps.pool, async (tx) => {
    await lockStream(tx, owner);
    let made: { sessionId: string; how: "modify" | "follow_up" };
    if (running && runningTask?.status === "active") {
      await lockStream(tx, running);
      await taskCommands.handle(
        deps.store,
        running,
        taskDecision({ type: "FollowUp", text: ZFollowUpInput.parse({ sessionId: running, text }).text }),
        { actor: TRACKER_ACTOR },
        { tx },
      );
      made = { sessionId: running, how: "follow_up" };
    } else {
      const base = running && runningTask?.status === "finished" ? running : owner;
      const forked = await modifySession(
        deps0,
        { sessionId: base, change: text, note: `review on #${review.number} (${deliveryId})` },
        TRACKER_ACTOR,
        { tx },
      );
      made = { sessionId: forked.sessionId, how: "modify" };
    }
    const record: NewEvent = {
      type: "PullRequestFeedbackReceived",
      data: {
        provider,
        repository: review.repository,
        number: review.number,
        deliveryId,
        event: eventName,
        author: review.author,
        text,
        followUp: made,
      },
    };
    await feedbackRecords.handle(deps.store, owner, () => [record], { actor: TRACKER_ACTOR }, { tx });
    return made;
  });
  // The follow-up's status is news for the tracker; failing to schedule it never undoes the follow-up (the next step's outcome schedules it).
  await scheduleTrackerSteps(deps, followUp.sessionId, {
    newId: timeOrderedId,
    ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
  }).catch((err: unknown) =>
    logger.warn({ err: String(err), sessionId: followUp.sessionId }, "could not schedule the tracker's steps of a review follow-up"),
  );
  return { outcome: "followed_up", sessionId: owner, followUp };
}
