// `catcafe watch <id>`: the session's timeline live in the terminal until the session ends;
// the exit code is the outcome (0 approved/done, 3 anything else). Events arrive through
// the `live.updates` subscription (SSE); `--poll` reads the timeline every second or more
// instead. `task start --watch`, `task confirm --watch`, `task rerun --watch` and `go` use
// the same watcher.
import { InvalidArgumentError, type Command } from "commander";
import { followSession, MIN_POLL_INTERVAL_MS, type FollowEntry, type FollowStatus } from "../../lib/client";
import { CliContext } from "../context";
import { EXIT } from "../errors";
import { examples } from "./help";

export interface WatchOptions {
  /** Poll instead of subscribing, at this interval. */
  pollMs?: number;
  /** Return (exit 0) when the run waits for a person instead of waiting with it. */
  stopWhenWaiting?: boolean;
  afterVersion?: number;
}

/** One terminal line per event, however many lines its summary has. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ⏎ ");
}

function entryLine(sessionId: string, e: FollowEntry): string {
  const inherited = e.streamId === sessionId ? "" : ` (from ${e.streamId})`;
  const failure = e.failure ? `  [${e.failure.errorClass}: ${e.failure.diagnosis}]` : "";
  const actor = e.actorName ?? e.actor;
  return `${e.recordedAt.slice(11, 19)}  #${String(e.version).padStart(3)}  ${e.type.padEnd(24)} ${actor.padEnd(20)} ${oneLine(e.summary)}${failure}${inherited}`;
}

function waitingLine(status: FollowStatus): string {
  const how =
    status.state === "awaiting_operator_confirm"
      ? `confirm with \`catcafe task confirm ${status.sessionId}\`, or send a follow-up with \`catcafe task followup ${status.sessionId} <text>\``
      : `it waits for a person's command in state ${status.state}`;
  return `… waiting for an operator (${status.state}): ${how}`;
}

/** Follows the session and prints it; returns the exit code its end calls for. */
export async function watchSession(ctx: CliContext, sessionId: string, options: WatchOptions = {}): Promise<number> {
  const { out } = ctx;
  out.progress(`watching ${sessionId} (Ctrl+C stops watching; the session goes on)`);
  for await (const update of followSession(ctx.client(), sessionId, {
    via: options.pollMs === undefined ? "subscription" : "poll",
    intervalMs: options.pollMs,
    afterVersion: options.afterVersion,
    stopWhenWaiting: options.stopWhenWaiting,
  })) {
    switch (update.type) {
      case "event":
        out.stream({ type: "event", entry: update.entry }, entryLine(sessionId, update.entry));
        break;
      case "waiting":
        out.stream({ type: "waiting", status: update.status }, waitingLine(update.status));
        if (options.stopWhenWaiting) return EXIT.OK;
        break;
      case "finished": {
        const { status, success } = update;
        out.stream(
          { type: "finished", outcome: status.outcome, success, status },
          success
            ? `✔ ${sessionId} finished: ${status.outcome}`
            : `✘ ${sessionId} finished without success: ${status.outcome ?? status.state}`,
        );
        return success ? EXIT.OK : EXIT.SESSION_UNSUCCESSFUL;
      }
    }
  }
  return EXIT.OK;
}

export function parseInteger(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number ≥ ${min}`);
    return n;
  };
}

export function registerWatchCommand(program: Command): void {
  program
    .command("watch")
    .description("follow a session's timeline live until it ends; exit 0 when it succeeded (approved/done), 3 when it did not")
    .argument("<session>", "session id (s-…)")
    .option(
      "--poll [ms]",
      `poll the timeline every <ms> (at least ${MIN_POLL_INTERVAL_MS}; default ${MIN_POLL_INTERVAL_MS}) instead of the live subscription`,
      parseInteger("--poll", MIN_POLL_INTERVAL_MS),
    )
    .option("--stop-at-confirm", "stop (exit 0) when the run waits for an operator instead of waiting with it")
    .option("--from <version>", "only events after this version", parseInteger("--from", 0))
    .addHelpText(
      "after",
      examples([
        "catcafe watch s-1a2b3c4d5e6f",
        "catcafe watch s-1a2b3c4d5e6f --stop-at-confirm",
        "catcafe watch s-1a2b3c4d5e6f --poll 2000",
        "catcafe watch s-1a2b3c4d5e6f --json | jq -c 'select(.type != \"event\")'",
      ]),
    )
    .action(async (sessionId: string, options: { poll?: number | true; stopAtConfirm?: boolean; from?: number }, command: Command) => {
      const pollMs = options.poll === true ? MIN_POLL_INTERVAL_MS : options.poll;
      process.exitCode = await watchSession(CliContext.of(command), sessionId, {
        pollMs,
        stopWhenWaiting: options.stopAtConfirm,
        afterVersion: options.from,
      });
    });
}
