// The category of each event type, for the appended-events counter (docs/operations.md,
// "Metrics"): the catalog that declares it (step, config, forge, conversation, delivery,
// pruning, team, intake), else `session` (tasks and the workflow engine, catalog.ts's own). A
// closed set: a label Prometheus can keep.
import { configCatalog } from "./config-catalog";
import { conversationCatalog } from "./conversation-catalog";
import { deliveryCatalog } from "./delivery-catalog";
import { forgeCatalog } from "./forge-catalog";
import { pruningCatalog } from "./pruning-catalog";
import { stepCatalog } from "./step-catalog";
import { teamCatalog } from "./team-catalog";
import { intakeCatalog } from "./intake-catalog";

const byType = new Map<string, string>(
  Object.entries({
    step: stepCatalog,
    config: configCatalog,
    forge: forgeCatalog,
    conversation: conversationCatalog,
    delivery: deliveryCatalog,
    pruning: pruningCatalog,
    team: teamCatalog,
    intake: intakeCatalog,
  }).flatMap(([category, catalog]) => Object.keys(catalog).map((type) => [type, category] as const)),
);

export function eventCategory(type: string): string {
  return byType.get(type) ?? "session";
}
