"use client";
// While a step runs: who is working on what, for how long (ticking from the StepStarted
// time), and the agent's words as they stream in when the runner records them. What the
// step is doing is also said in a polite live region (always present, so a change in it
// is heard; the ticking clock and the streamed words are not read out). A step that has
// waited ~15 s while no runner is alive says how to start one.
import type { SessionEntry } from "@/server/sessions/view/entries";
import type { SessionStatus } from "@/server/sessions/view/progress";
import { LiveDot } from "@/components/live-dot";
import { capitalize, formatElapsed, timeOfDay } from "./format";
import { RoleAvatar, roleStyle } from "./role-style";
import { runnerDown, START_RUNNER_HINT, useLiveRunnerCount } from "./runner-wait";
import { useNow } from "./use-now";

const STREAM_TAIL_CHARS = 4000;

export function RunningStep({ status, entries }: { status: SessionStatus; entries: SessionEntry[] }) {
  const step = status.status === "active" ? status.step : null;
  const now = useNow(step !== null);
  const waitsForRunner = step !== null && !step.startedAt && !step.retryAt;
  const waitedMs = waitsForRunner && now !== null && step.scheduledAt ? now - Date.parse(step.scheduledAt) : null;
  const liveRunners = useLiveRunnerCount(waitedMs);
  const noRunner = runnerDown(waitedMs, liveRunners);
  const headline = !step
    ? ""
    : noRunner
      ? START_RUNNER_HINT
      : !step.startedAt
        ? step.retryAt
          ? `${capitalize(step.role)}'s step waits for its retry at ${timeOfDay(step.retryAt)} UTC`
          : `${capitalize(step.role)}'s step waits for a runner`
        : step.state === "running_tests"
          ? "The allowlist runner is running the test commands"
          : `${capitalize(step.role)} is working`;
  const announcer = (
    <p role="status" aria-live="polite" aria-atomic="true" className="sr-only" data-testid="running-step-status">
      {headline}
    </p>
  );
  if (!step) return announcer;
  const since = step.startedAt ?? step.scheduledAt;
  const elapsed = now !== null && since ? formatElapsed(now - Date.parse(since)) : "–:––";
  const streamed = entries
    .flatMap((e) => (e.detail.kind === "agent_streamed" && e.detail.stepId === step.id ? [e.detail.text] : []))
    .join("")
    .slice(-STREAM_TAIL_CHARS);
  const commands = step.state === "running_tests";
  const waiting = !step.startedAt;
  return (
    <>
      {announcer}
      <section
        data-testid="running-step"
        data-role={step.role}
        className="overflow-hidden rounded-lg border border-sky-200 bg-sky-50/70 dark:border-sky-900/70 dark:bg-sky-950/30"
      >
        <div className="flex flex-wrap items-center gap-x-3 gap-y-1 px-4 py-2 text-xs">
          <LiveDot color={waiting ? "bg-amber-500" : "bg-sky-500"} ping={!waiting} />
          {commands ? null : <RoleAvatar role={step.role} />}
          {noRunner ? (
            <span data-testid="no-runner" className="font-semibold text-amber-800 dark:text-amber-300">
              No runner is alive — start one with <code className="font-mono">npm run runner</code>
            </span>
          ) : (
            <span className={`font-semibold ${commands ? "text-zinc-800 dark:text-zinc-100" : roleStyle(step.role).text}`}>{headline}</span>
          )}
          <span className="font-mono text-xs text-zinc-500 dark:text-zinc-400">{step.state}</span>
          {step.attempt && step.attempt > 1 ? <span className="text-zinc-500 dark:text-zinc-400">attempt {step.attempt}</span> : null}
          {step.runnerId ? <span className="font-mono text-xs text-zinc-500 dark:text-zinc-400">on {step.runnerId}</span> : null}
          <span
            data-testid="elapsed"
            className="ml-auto font-mono text-sm font-medium text-zinc-800 tabular-nums dark:text-zinc-100"
            title={since ? `since ${since}` : undefined}
          >
            {elapsed}
          </span>
        </div>
        {streamed ? (
          <pre
            data-testid="streaming-output"
            tabIndex={0}
            role="region"
            aria-label="What the agent wrote so far"
            className="max-h-48 overflow-auto border-t border-sky-200 bg-white/70 px-4 py-2 font-mono text-xs leading-5 whitespace-pre-wrap text-zinc-700 dark:border-sky-900/60 dark:bg-zinc-950/60 dark:text-zinc-300"
          >
            {streamed}
            <span className="ml-0.5 inline-block h-3.5 w-1.5 bg-zinc-400 motion-safe:animate-pulse-brief align-middle" aria-hidden />
          </pre>
        ) : null}
      </section>
    </>
  );
}
