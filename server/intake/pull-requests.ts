// Pull-request deliveries (reviews, review comments, merge-request notes and events), verified
// like every delivery (./receive.ts), are handed to the tracker's review follow-ups
// (docs/delivery.md, "The tracker"): a review asking for changes on a pull request a session
// delivered becomes that session's follow-up. The follow-up keeps its own record per delivery
// id, so the delivery's row is written after it: a delivery that failed half-way can be
// delivered again and is then carried out once.
import { followUpFromPullRequestDelivery, type ReviewFollowUpAnswer } from "../tracker/review-follow-ups";
import type { IntakeProvider } from "./rules";
import { recordDelivery, type IntakeDeps } from "./start";

export interface PullRequestDelivery {
  provider: IntakeProvider;
  projectId: string;
  event: string;
  deliveryId: string;
  payload: unknown;
}

export async function routePullRequestDelivery(deps: IntakeDeps, delivery: PullRequestDelivery): Promise<ReviewFollowUpAnswer> {
  const answer = await followUpFromPullRequestDelivery(deps, delivery.provider, delivery.event, delivery.payload, delivery.deliveryId);
  await recordDelivery(deps.pool, delivery, answer.outcome === "followed_up" ? "followed_up" : "ignored");
  return answer;
}
