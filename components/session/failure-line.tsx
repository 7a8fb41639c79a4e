// Every failure reads the same way: its error class (req W10) as a pill, then one line
// that says what went wrong (req W11).
import type { Failure } from "@/server/sessions/view/entries";

export function ErrorClassPill({ errorClass }: { errorClass: string }) {
  return (
    <span className="inline-flex shrink-0 items-center rounded bg-rose-500/10 px-1.5 py-px font-mono text-xs font-medium text-rose-700 ring-1 ring-rose-600/20 ring-inset dark:text-rose-300 dark:ring-rose-400/30">
      {errorClass}
    </span>
  );
}

export function FailureLine({ failure, className = "" }: { failure: Failure; className?: string }) {
  return (
    <p data-testid="failure" className={`flex min-w-0 items-start gap-2 text-xs text-rose-800 dark:text-rose-200 ${className}`}>
      <ErrorClassPill errorClass={failure.errorClass} />
      <span className="min-w-0 truncate leading-5" title={failure.diagnosis}>
        {failure.diagnosis}
      </span>
    </p>
  );
}
