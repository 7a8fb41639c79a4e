"use client";
// The bake-off's two decisions as buttons taking callbacks: ask the judge, and pick a
// contender (with the person's reason). Without handlers they stay disabled and say why, so
// the page reads the same whether or not the commands exist in this build.
import { useId, useState } from "react";
import { SETTINGS_BUTTON_CLASS, SETTINGS_FIELD_CLASS } from "@/components/form-classes";

export interface BakeOffActionHandlers {
  judge(): Promise<unknown>;
  pick(input: { contenderId: string; reason: string }): Promise<unknown>;
}

const UNAVAILABLE = "Judging and picking are not available in this build (the bake-off commands are missing).";
const PRIMARY = `${SETTINGS_BUTTON_CLASS} bg-zinc-900 text-white hover:bg-zinc-700 dark:bg-zinc-100 dark:text-zinc-900`;
const SECONDARY = `${SETTINGS_BUTTON_CLASS} border border-zinc-300 bg-white text-zinc-800 hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-200`;

function useRun() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    fn().then(
      () => setBusy(false),
      (err: unknown) => {
        setBusy(false);
        setError(err instanceof Error ? err.message : String(err));
      },
    );
  };
  return { busy, error, run };
}

function Judge({ actions, judged }: { actions: BakeOffActionHandlers | null; judged: boolean }) {
  const why = useId();
  const { busy, error, run } = useRun();
  return (
    <div className="flex flex-wrap items-center gap-2">
      <button
        type="button"
        className={PRIMARY}
        disabled={!actions || busy}
        aria-describedby={!actions ? why : undefined}
        onClick={() => actions && run(() => actions.judge())}
        data-testid="judge-button"
      >
        {judged ? "Ask the judge again" : "Ask the judge"}
      </button>
      {!actions ? (
        <span id={why} className="text-xs text-zinc-600 dark:text-zinc-400">
          {UNAVAILABLE}
        </span>
      ) : null}
      {error ? (
        <span role="alert" className="text-xs text-rose-700 dark:text-rose-400">
          {error}
        </span>
      ) : null}
    </div>
  );
}

function Pick({ contender, actions }: { contender: { id: string }; actions: BakeOffActionHandlers | null }) {
  const why = useId();
  const field = useId();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const { busy, error, run } = useRun();
  if (!open || !actions)
    return (
      <>
        <button
          type="button"
          className={SECONDARY}
          disabled={!actions}
          aria-describedby={!actions ? why : undefined}
          onClick={() => setOpen(true)}
          data-testid="pick-button"
        >
          Pick {contender.id}
        </button>
        {!actions ? (
          <span id={why} className="sr-only">
            {UNAVAILABLE}
          </span>
        ) : null}
      </>
    );
  return (
    <form
      className="flex w-full flex-col gap-2"
      onSubmit={(e) => {
        e.preventDefault();
        run(() => actions.pick({ contenderId: contender.id, reason: reason.trim() }));
      }}
    >
      <label htmlFor={field} className="text-xs font-medium text-zinc-700 dark:text-zinc-300">
        Why {contender.id}?
      </label>
      <input id={field} className={SETTINGS_FIELD_CLASS} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} />
      <div className="flex gap-2">
        <button type="submit" className={PRIMARY} disabled={busy}>
          Deliver {contender.id}
        </button>
        <button type="button" className={SECONDARY} onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      {error ? (
        <span role="alert" className="text-xs text-rose-700 dark:text-rose-400">
          {error}
        </span>
      ) : null}
    </form>
  );
}

export const BakeOffActions = { Judge, Pick };
