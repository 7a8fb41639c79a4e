"use client";
// "Fork here" in the replay view (req E5, F7): a new session that inherits this session's
// events up to the position shown, and goes on from there (or runs the step again from there,
// a revert), with a note of why. The parent never changes. A refusal (a step still running at
// that position, a position before the task started) is shown as the server words it.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { BUTTON_STYLES } from "@/components/session/session-actions";
import { useTRPC } from "@/lib/trpc/client";

export function ForkHere({ sessionId, version }: { sessionId: string; version: number }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [reason, setReason] = useState<"manual" | "revert">("manual");
  const [note, setNote] = useState("");
  const [error, setError] = useState<string | null>(null);
  const fork = useMutation(
    trpc.sessions.fork.mutationOptions({
      onError: (err) => setError(err instanceof Error ? err.message : String(err)),
      onSuccess: (result) => router.push(`/sessions/${result.sessionId}`),
    }),
  );
  return (
    <form
      data-testid="fork-here"
      className="flex flex-wrap items-end gap-3 px-4 py-3"
      onSubmit={(e) => {
        e.preventDefault();
        setError(null);
        fork.mutate({ sessionId, atVersion: version, reason, ...(note.trim() ? { note: note.trim() } : {}) });
      }}
    >
      <fieldset className="flex flex-wrap gap-3 text-xs text-zinc-700 dark:text-zinc-300">
        <legend className="sr-only">What the fork does</legend>
        {(
          [
            ["manual", "Go on from here"],
            ["revert", "Run again from here (revert)"],
          ] as const
        ).map(([value, label]) => (
          <label key={value} className="inline-flex items-center gap-1.5">
            <input type="radio" name="fork-reason" value={value} checked={reason === value} onChange={() => setReason(value)} />
            {label}
          </label>
        ))}
      </fieldset>
      <label className="flex min-w-48 flex-1 flex-col gap-1 text-xs font-medium text-zinc-700 dark:text-zinc-300">
        Note
        <input
          data-testid="fork-note"
          value={note}
          onChange={(e) => setNote(e.target.value)}
          maxLength={2000}
          placeholder="Why this fork (kept with it)"
          className="rounded-md border border-zinc-300 bg-white px-2.5 py-1.5 text-[13px] font-normal text-zinc-900 placeholder:text-zinc-500 focus:border-zinc-900 focus:ring-2 focus:ring-zinc-900/10 focus:outline-none dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100 dark:placeholder:text-zinc-400"
        />
      </label>
      <button type="submit" data-testid="fork-submit" className={BUTTON_STYLES.primary} disabled={fork.isPending}>
        {fork.isPending ? "Forking…" : `Fork at event ${version}`}
      </button>
      {error ? (
        <p role="alert" data-testid="fork-error" className="w-full text-xs text-rose-700 dark:text-rose-300">
          {error}
        </p>
      ) : null}
    </form>
  );
}
