// Webhook deliveries (`webhook` steps): when a session needs a person, the workflow
// schedules one, and a runner POSTs the news to the project's webhook — JSON, or a
// Slack-compatible `{text}`. A receiver that fails (5xx, 408, 429, a timeout, a refused
// connection) is retried with the step's backoff; each attempt is in the session's events
// (StepStarted, StepFailed with the outcome's class, StepCompleted with the status), so every
// delivery and every failure is recorded. The URL is looked up when the step runs and
// never recorded: Slack-style URLs carry their token in the path. A failure is recorded as
// its class only — unreachable, refused, http_error with the status — never in the
// receiver's words: the timeline must not tell a reader what answers on a port
// (docs/configuration.md, "Webhooks"). A receiver on a non-public address is refused unless
// the admin allows its host (access.privateHosts, server/net/outbound.ts).
import { z } from "zod";
import type { Resolve } from "../net/hosts";
import { OutboundRefused, outboundFetch, PRIVATE_HOSTS_SETTING } from "../net/outbound";
import { StepExecutionError } from "./executors";
import { defineStepKind, type StepKind } from "./step-kinds";

export interface Webhook {
  url: string;
  format: "json" | "slack";
  /** The hosts on non-public addresses the project's calls may reach now (access.privateHosts in force). */
  privateHosts: readonly string[];
}

export interface WebhookDeps {
  /** The project's webhook now (null: none any more, the delivery is skipped). */
  webhookFor: (projectId: string) => Promise<Webhook | null>;
  /** The dashboard's address, for links in the message (NEXTAUTH_URL); none: no link. */
  publicUrl?: string;
  /** One POST may take this long. */
  requestTimeoutMs?: number;
  /** How the receiver's name resolves (default: the system's resolver); tests inject one. */
  resolve?: Resolve;
}

/** What a failed delivery records: its class (and for http_error the status), nothing the receiver said. */
export type WebhookFailure = "unreachable" | "refused" | "http_error";

const notDelivered = (failure: WebhookFailure, detail = "") => `webhook not delivered: ${failure}${detail}`;

const ZWebhookInput = z.object({
  projectId: z.string(),
  iteration: z.number().int(),
  attention: z.enum(["waiting", "escalated", "failed"]),
  state: z.string(),
  outcome: z.string().nullable(),
  reason: z.string().nullable(),
});
type WebhookInput = z.infer<typeof ZWebhookInput>;

/** What the step records: delivered with the receiver's status, or skipped with the reason. */
const ZWebhookOutput = z.union([
  z.object({ delivered: z.literal(true), status: z.number().int() }),
  z.object({ delivered: z.literal(false), reason: z.string() }),
]);
type WebhookOutput = z.infer<typeof ZWebhookOutput>;

const HEADLINES: Record<WebhookInput["attention"], string> = {
  waiting: "waits for a person's confirm",
  escalated: "was escalated to a person (loop limit reached)",
  failed: "failed and needs a person",
};

/** What the receiver gets. */
export function webhookBody(format: Webhook["format"], sessionId: string, input: WebhookInput, publicUrl?: string): unknown {
  const url = publicUrl ? `${publicUrl.replace(/\/+$/, "")}/sessions/${sessionId}` : null;
  if (format === "slack") {
    const what = `Cat Cafe: session ${sessionId} (project ${input.projectId}) ${HEADLINES[input.attention]}`;
    const detail = [input.outcome ? `outcome ${input.outcome}` : `state ${input.state}`, input.reason].filter(Boolean).join(": ");
    return { text: `${what}. ${detail}${url ? ` <${url}|Open it>` : ""}` };
  }
  return { event: "session.attention", sessionId, ...input, url };
}

/** A receiver's answer that is worth trying again: it may be up or less busy later. */
function retryable(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

export function webhookStepKind(deps: WebhookDeps): StepKind {
  return defineStepKind({
    kind: "webhook",
    input: ZWebhookInput,
    output: ZWebhookOutput,
    // An input that does not parse keeps the class and wording this step has always reported.
    invalidInput: { errorClass: "tool_error", message: (_step, issues) => `invalid webhook input: ${issues}` },
    async execute(step, input, ctx): Promise<WebhookOutput> {
      const hook = await deps.webhookFor(input.projectId);
      if (!hook) return { delivered: false, reason: `project ${input.projectId} has no webhook any more` };
      const timeout = AbortSignal.timeout(deps.requestTimeoutMs ?? 5_000);
      let response: Response;
      try {
        response = await outboundFetch(
          hook.url,
          {
            method: "POST",
            headers: { "content-type": "application/json", "user-agent": "catcafe-webhook" },
            body: JSON.stringify(webhookBody(hook.format, step.sessionId, input, deps.publicUrl)),
            signal: AbortSignal.any([ctx.signal, timeout]),
          },
          { privateHosts: hook.privateHosts, ...(deps.resolve ? { resolve: deps.resolve } : {}) },
        );
      } catch (err) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (err instanceof OutboundRefused && err.why === "non_public") {
          const why = `: its host is on a loopback, link-local or private address; an admin can allow it in ${PRIVATE_HOSTS_SETTING}`;
          throw new StepExecutionError("tool_error", notDelivered("refused", why), false);
        }
        // A name that does not resolve, a refused, reset or silent connection: one class, retried.
        throw new StepExecutionError("provider_network_error", notDelivered("unreachable"), true);
      }
      await response.body?.cancel().catch(() => {});
      if (!response.ok) {
        // A redirect too: never followed (the URL's token would go elsewhere), and not retried.
        const retry = retryable(response.status);
        const after = Number(response.headers.get("retry-after"));
        throw new StepExecutionError(
          retry ? "provider_network_error" : "tool_error",
          notDelivered("http_error", ` ${response.status}${retry ? "" : " (not retried: the receiver refuses this request)"}`),
          retry,
          Number.isFinite(after) && after > 0 ? Math.min(after, 300) * 1000 : undefined,
        );
      }
      return { delivered: true, status: response.status };
    },
  });
}
