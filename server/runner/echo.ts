// The runner's own step, `echo`: waits `delayMs` (abortable), then returns the message. It
// tests the runner's mechanics (claims, leases, retries) without agents or git.
import { z } from "zod";
import { defineStepKind, stepKindRegistry } from "./step-kinds";

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

const ZEchoInput = z.object({
  message: z.string(),
  delayMs: z.number().int().nonnegative().max(3_600_000).default(0),
});

const ZEchoOutput = z.object({ echo: z.string() });

export const echoStepKind = defineStepKind({
  kind: "echo",
  input: ZEchoInput,
  output: ZEchoOutput,
  // Whoever schedules an echo writes its input by hand (a test, an operator): a wrong one is
  // that caller's tool error, as it always was for this step.
  invalidInput: { errorClass: "tool_error", message: (_step, issues) => `invalid echo input: ${issues}` },
  async execute(_step, input, ctx) {
    if (input.delayMs > 0) await sleep(input.delayMs, ctx.signal);
    return { echo: input.message };
  },
});

/** The runner's built-in steps, for a runner composed without the application's (its own tests, the pickup benchmark). */
export const builtinExecutors = stepKindRegistry([echoStepKind]).executors;
