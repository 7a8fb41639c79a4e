// `catcafe deliver <session>` (docs/delivery.md): an approved session's work leaves its worktree as the
// project's delivery settings say — its branch merged into the target, pushed, or pushed with
// a pull request opened or updated. A runner carries it out; by default this waits for the
// outcome (exit 0 delivered, 1 not) and prints it; `--no-wait` returns once it is asked.
import type { Command } from "commander";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { examples } from "./help";

const WAIT_INTERVAL_MS = 500;
const WAIT_LIMIT_MS = 10 * 60_000;

export function registerDeliverCommand(program: Command): void {
  program
    .command("deliver")
    .description("deliver an approved session's work: merge its branch, push it, or open/update a pull request (operator)")
    .argument("<session>", "session id (s-…)")
    .option("--no-wait", "return once the delivery is asked for")
    .addHelpText("after", examples(["catcafe deliver s-1a2b3c4d5e6f", "catcafe deliver s-1a2b3c4d5e6f --no-wait --json"]))
    .action(async (sessionId: string, options: { wait: boolean }, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      const asked = await client.sessions.deliver.mutate({ sessionId });
      if (!options.wait) {
        ctx.out.result(asked, () => `Delivery asked (${asked.method} of ${asked.branch}); a runner carries it out.`);
        return;
      }
      ctx.out.progress(`delivering ${asked.branch} (${asked.method})…`);
      const deadline = Date.now() + WAIT_LIMIT_MS;
      for (;;) {
        const delivery = (await client.sessions.deliveries.query({ sessionId })).find((d) => d.stepId === asked.stepId);
        const outcome = delivery?.outcome;
        if (outcome?.type === "DeliveryCompleted") {
          ctx.out.result(delivery, () =>
            outcome.pullRequest
              ? `✔ pull request #${outcome.pullRequest.number} ${outcome.pullRequest.updated ? "updated" : "opened"}: ${outcome.pullRequest.url}`
              : outcome.merged
                ? `✔ ${outcome.branch} merged into ${outcome.merged.target} (${outcome.merged.how.replace("_", " ")}, now ${outcome.merged.commit.slice(0, 12)})`
                : `✔ ${outcome.branch} pushed to ${outcome.pushed?.remote}`,
          );
          return;
        }
        if (outcome?.type === "DeliveryFailed") {
          const files = outcome.files.length ? ` (files: ${outcome.files.join(", ")})` : "";
          throw new CliError(`delivery failed (${outcome.errorClass}): ${outcome.message}${files}`);
        }
        if (Date.now() > deadline)
          throw new CliError(`the delivery did not finish in ${WAIT_LIMIT_MS / 60_000} minutes; see catcafe session show ${sessionId}`);
        await new Promise((r) => setTimeout(r, WAIT_INTERVAL_MS));
      }
    });
}
