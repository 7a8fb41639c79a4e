"use client";
// "Fork here" in the replay view (req E5, F5, F7): a new session that inherits this session's
// events up to the position shown, and goes on from there (or runs the step again from there,
// a revert), with a note of why; at the end of a finished session, a modify (the note is the
// change). The parent never changes. A refusal (a step still running at that position, a
// position before the task started) is shown as the server words it.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { BUTTON_STYLES } from "@/components/session/session-actions";
import { useTRPC } from "@/lib/trpc/client";

type Reason = "manual" | "revert" | "modify";

export function ForkHere({ sessionId, version, canModify }: { sessionId: string; version: number; canModify: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [reason, setReason] = useState<Reason>("manual");
  const [note, setNote] = useState("");
  const [error, setError] = useState<string | null>(null);
  const options = {
    onError: (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
    onSuccess: (result: { sessionId: string }) => router.push(`/sessions/${result.sessionId}`),
  };
  const fork = useMutation(trpc.sessions.fork.mutationOptions(options));
  const modify = useMutation(trpc.sessions.modify.mutationOptions(options));
  const pending = fork.isPending || modify.isPending;
  const choices: Array<[Reason, string]> = [
    ["manual", "Go on from here"],
    ["revert", "Run again from here (revert)"],
    ...(canModify ? [["modify", "Modify: make a change (the note says what)"] as [Reason, string]] : []),
  ];
  return (
    <form
      data-testid="fork-here"
      className="flex flex-wrap items-end gap-3 px-4 py-3"
      onSubmit={(e) => {
        e.preventDefault();
        setError(null);
        if (reason === "modify") {
          if (!note.trim()) setError("Say in the note what should change.");
          else modify.mutate({ sessionId, change: note.trim() });
          return;
        }
        fork.mutate({ sessionId, atVersion: version, reason, ...(note.trim() ? { note: note.trim() } : {}) });
      }}
    >
      <fieldset className="flex flex-wrap gap-3 text-xs text-zinc-700 dark:text-zinc-300">
        <legend className="sr-only">What the fork does</legend>
        {choices.map(([value, label]) => (
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
          className="rounded-md border border-zinc-300 bg-white px-2.5 py-1.5 text-[13px] font-normal text-zinc-900 placeholder:text-zinc-500 focus:border-zinc-900 focus:ring-2 focus:ring-zinc-900 focus:outline-none dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100 dark:placeholder:text-zinc-500"
        />
      </label>
      <button type="submit" data-testid="fork-submit" className={BUTTON_STYLES.primary} disabled={pending}>
        {pending ? "Forking…" : reason === "modify" ? "Start the change" : `Fork at event ${version}`}
      </button>
      {error ? (
        <p role="alert" data-testid="fork-error" className="w-full text-xs text-rose-700 dark:text-rose-300">
          {error}
        </p>
      ) : null}
    </form>
  );
}
