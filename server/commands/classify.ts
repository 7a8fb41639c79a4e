// Maps a command outcome onto the error taxonomy (req W10): refused, failed, timed out,
// cancelled, each with a one-line diagnosis. A successful run maps to null.
import type { ErrorClass } from "../errors";
import type { CommandOutcome } from "./run";

export type CommandErrorClass = Extract<ErrorClass, "command_refused" | "command_failed" | "timeout" | "cancelled">;

export interface CommandFailure {
  errorClass: CommandErrorClass;
  reason: string;
}

export function classifyCommandOutcome(outcome: CommandOutcome): CommandFailure | null {
  if (outcome.status === "refused") return { errorClass: "command_refused", reason: outcome.reason };
  // Cancellation and timeout come first: the signal that killed the process is their consequence.
  if (outcome.cancelled) return { errorClass: "cancelled", reason: `cancelled after ${outcome.durationMs} ms` };
  if (outcome.timedOut) return { errorClass: "timeout", reason: `timed out after ${outcome.timeoutMs} ms` };
  if (outcome.spawnError) return { errorClass: "command_failed", reason: outcome.spawnError.message };
  if (outcome.signal) return { errorClass: "command_failed", reason: `killed by ${outcome.signal}` };
  if (outcome.exitCode !== 0) return { errorClass: "command_failed", reason: `exited with code ${outcome.exitCode}` };
  return null;
}
