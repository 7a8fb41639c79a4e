// Pull-request deliveries (reviews, review comments, merge-request notes and events), verified
// and deduplicated like every delivery (./receive.ts), are handed here: the one place a
// follow-up handler is wired in (docs/intake.md, "Pull-request events"). For now they are
// acknowledged and ignored.
import type { IntakeProvider } from "./rules";

export interface PullRequestDelivery {
  provider: IntakeProvider;
  projectId: string;
  event: string;
  deliveryId: string;
  payload: unknown;
}

export type PullRequestAnswer = Record<string, unknown>;

export async function routePullRequestDelivery(_delivery: PullRequestDelivery): Promise<PullRequestAnswer> {
  return { ignored: "pull_request" };
}
