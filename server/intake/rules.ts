// Which trigger of a project's intake rules a delivery fires (docs/intake.md), and the prompt
// the task starts with: the issue's title and body — secrets redacted, cut to fit — and, for a
// comment command, its instructions. Pure: the caller brings the rules and the delivery.
import type { IntakeSettings } from "../config/schemas";
import type { TBakeOffStart } from "../events/bake-off-catalog";
import { looksLikeSecret } from "../config/secrets";
import type { INTAKE_TRIGGERS } from "../events/intake-catalog";
import { redactKnownSecrets } from "../redact";
import type { IssueRef, TrackerDelivery } from "./payloads";

export type IntakeProvider = IntakeSettings["provider"];
export type IntakeTrigger = (typeof INTAKE_TRIGGERS)[number];

/** A task's prompt is at most this long (ZStartTaskInput); an issue's text is cut to fit, with CUT_MARKER. */
export const PROMPT_LIMIT = 20_000;
export const CUT_MARKER = "[cut]";
/** The comment command: `/catcafe` at the start of a line, then the instructions. */
const COMMAND = /^\/catcafe(?:[ \t]+(.*))?$/m;

export interface FiredTrigger {
  trigger: IntakeTrigger;
  /** The workflow the task runs: a bake_off rule runs the review loop's proposal, with `bakeOff`'s contenders. */
  workflow: "review_loop" | "forge";
  autoConfirm: boolean;
  /** A bake_off rule's contenders, as tasks.start takes them (docs/bake-off.md). */
  bakeOff?: TBakeOffStart;
  /** The comment command's instructions (the comment trigger only). */
  instructions?: string;
  /** Who fired it: the labeller, the assigner, the comment's author. */
  sender: string;
}

type TriggerRule = NonNullable<IntakeSettings["triggers"]["comment"]>;

/** What a rule starts: its workflow, or a bake-off (the review loop with its contenders). */
function started(rule: TriggerRule): Pick<FiredTrigger, "workflow" | "autoConfirm" | "bakeOff"> {
  if (rule.workflow === "bake_off")
    return { workflow: "review_loop", autoConfirm: false, ...(rule.bakeOff ? { bakeOff: rule.bakeOff } : {}) };
  return { workflow: rule.workflow, autoConfirm: rule.autoConfirm };
}

/** The trigger the delivery fires under `rules`, or null. One delivery fires at most one. */
export function firedTrigger(rules: IntakeSettings, delivery: Extract<TrackerDelivery, { kind: "issue" }>): FiredTrigger | null {
  const { label, assignment, comment } = rules.triggers;
  if (label && delivery.labelsAdded.includes(label.name)) return { trigger: "label", ...started(label), sender: delivery.sender };
  if (assignment && rules.botUser && delivery.assigned.includes(rules.botUser))
    return { trigger: "assignment", ...started(assignment), sender: delivery.sender };
  const command = delivery.comment ? COMMAND.exec(delivery.comment.body) : null;
  if (comment && delivery.comment && command)
    return {
      trigger: "comment",
      ...started(comment),
      instructions: (command[1] ?? "").trim(),
      sender: delivery.comment.author,
    };
  return null;
}

/** `text` with the server's secret values and anything shaped like a key or token replaced. */
export function redactIssueText(text: string): string {
  const known = redactKnownSecrets(text).text;
  return known.replace(/\S+/g, (word) => (looksLikeSecret(word) ? "[redacted]" : word));
}

/** The task's prompt from the issue (and the comment command's instructions), redacted and at most PROMPT_LIMIT characters. */
export function issuePrompt(issue: IssueRef, instructions?: string): string {
  const head = `${redactIssueText(issue.title)}\n\n`;
  const tail = (instructions ? `\n\nInstructions from the comment: ${redactIssueText(instructions)}` : "") + `\n\nIssue: ${issue.url}`;
  const body = redactIssueText(issue.body.replace(/\r\n/g, "\n")).trim();
  const room = PROMPT_LIMIT - head.length - tail.length;
  const cut = body.length > room ? `${body.slice(0, Math.max(0, room - CUT_MARKER.length - 1))}\n${CUT_MARKER}` : body;
  return `${head}${cut}${tail}`.slice(0, PROMPT_LIMIT);
}
