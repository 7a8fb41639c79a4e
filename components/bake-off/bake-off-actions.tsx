"use client";
// The bake-off's decisions as buttons taking callbacks (docs/bake-off.md, "The comparison
// page"): ask the judge, pick a contender (with the person's reason), dismiss with no winner.
// Each is disabled, saying why, when it would be refused (`blocked`: contenders still running,
// nothing pickable, a viewer), and shows the server's refusal when one comes back.
import { useId, useState } from "react";
import { SETTINGS_BUTTON_CLASS, SETTINGS_FIELD_CLASS } from "@/components/form-classes";

export interface BakeOffActionHandlers {
  judge(): Promise<unknown>;
  pick(input: { contenderId: string; reason: string }): Promise<unknown>;
  dismiss(input: { reason: string }): Promise<unknown>;
}

const PRIMARY = `${SETTINGS_BUTTON_CLASS} bg-zinc-900 text-white hover:bg-zinc-700 dark:bg-zinc-100 dark:text-zinc-900`;
const SECONDARY = `${SETTINGS_BUTTON_CLASS} border border-zinc-300 bg-white text-zinc-800 hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-200`;
const WHY = "text-xs text-zinc-600 dark:text-zinc-400";

function useRun() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = (fn: () => Promise<unknown>, after?: () => void) => {
    setBusy(true);
    setError(null);
    fn().then(
      () => {
        setBusy(false);
        after?.();
      },
      (err: unknown) => {
        setBusy(false);
        setError(err instanceof Error ? err.message : String(err));
      },
    );
  };
  return { busy, error, run };
}

function Failure({ error }: { error: string | null }) {
  return error ? (
    <span role="alert" className="text-xs text-rose-700 dark:text-rose-400" data-testid="bake-off-action-error">
      {error}
    </span>
  ) : null;
}

/** A button that opens a one-field form (a reason), then sends it. */
function WithReason({
  open: label,
  send,
  question,
  blocked,
  testId,
  onSend,
}: {
  open: string;
  send: string;
  question: string;
  blocked: string | null;
  testId: string;
  onSend: (reason: string) => Promise<unknown>;
}) {
  const why = useId();
  const field = useId();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const { busy, error, run } = useRun();
  if (!open || blocked)
    return (
      <span className="flex flex-wrap items-center gap-2">
        <button
          type="button"
          className={SECONDARY}
          disabled={blocked !== null}
          aria-describedby={blocked ? why : undefined}
          onClick={() => setOpen(true)}
          data-testid={testId}
        >
          {label}
        </button>
        {blocked ? (
          <span id={why} className={WHY} data-testid={`${testId}-why`}>
            {blocked}
          </span>
        ) : null}
      </span>
    );
  return (
    <form
      className="flex w-full flex-col gap-2"
      onSubmit={(e) => {
        e.preventDefault();
        run(() => onSend(reason.trim()));
      }}
    >
      <label htmlFor={field} className="text-xs font-medium text-zinc-700 dark:text-zinc-300">
        {question}
      </label>
      <input
        id={field}
        className={SETTINGS_FIELD_CLASS}
        value={reason}
        onChange={(e) => setReason(e.target.value)}
        maxLength={2000}
        data-testid={`${testId}-reason`}
      />
      <div className="flex gap-2">
        <button type="submit" className={PRIMARY} disabled={busy} data-testid={`${testId}-send`}>
          {send}
        </button>
        <button type="button" className={SECONDARY} onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      <Failure error={error} />
    </form>
  );
}

function Judge({
  actions,
  judged,
  blocked,
}: {
  actions: BakeOffActionHandlers;
  judged: boolean;
  /** Why the judge cannot be asked now, or null. */
  blocked: string | null;
}) {
  const why = useId();
  const { busy, error, run } = useRun();
  return (
    <div className="flex flex-wrap items-center gap-2">
      <button
        type="button"
        className={PRIMARY}
        disabled={blocked !== null || busy}
        aria-describedby={blocked ? why : undefined}
        onClick={() => run(() => actions.judge())}
        data-testid="judge-button"
      >
        {judged ? "Ask the judge again" : "Ask the judge"}
      </button>
      {blocked ? (
        <span id={why} className={WHY} data-testid="judge-why">
          {blocked}
        </span>
      ) : null}
      <Failure error={error} />
    </div>
  );
}

function Pick({ contender, actions, blocked }: { contender: { id: string }; actions: BakeOffActionHandlers; blocked: string | null }) {
  return (
    <WithReason
      open={`Pick ${contender.id}`}
      send={`Deliver ${contender.id}`}
      question={`Why ${contender.id}?`}
      blocked={blocked}
      testId="pick-button"
      onSend={(reason) => actions.pick({ contenderId: contender.id, reason })}
    />
  );
}

function Dismiss({ actions, blocked }: { actions: BakeOffActionHandlers; blocked: string | null }) {
  return (
    <WithReason
      open="Dismiss: no winner"
      send="Dismiss the bake-off"
      question="Why no winner?"
      blocked={blocked}
      testId="dismiss-button"
      onSend={(reason) => actions.dismiss({ reason })}
    />
  );
}

export const BakeOffActions = { Judge, Pick, Dismiss };
