// What a mode decided, shown where it happened: a routing with every candidate's score and
// why, a vote's totals with the winner, a procedure's step, and a call for a person.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/api/root";

type Entry = inferRouterOutputs<AppRouter>["conversations"]["get"]["entries"][number];
type Note = Extract<Entry, { kind: "note" }>["note"];

const card = "rounded-md border px-3 py-2 text-sm";

export function NoteCard({ note }: { note: Note }) {
  switch (note.kind) {
    case "tallied":
      return (
        <div
          className={`${card} border-violet-300 bg-violet-50 text-violet-950 dark:border-violet-800 dark:bg-violet-950/40 dark:text-violet-100`}
          data-testid="tally"
        >
          <div className="font-medium">
            Vote {note.round}:{" "}
            {note.winner ? (
              <>
                winner <span className="font-mono">{note.winner}</span>
              </>
            ) : (
              "no winner"
            )}{" "}
            ({note.reason})
          </div>
          <table className="mt-1 w-full text-xs">
            <thead>
              <tr className="text-left">
                <th className="font-semibold">Choice</th>
                <th className="font-semibold">Weight</th>
                <th className="font-semibold">Ballots</th>
                <th className="font-semibold">Confidence</th>
              </tr>
            </thead>
            <tbody>
              {note.totals.map((t) => (
                <tr key={t.choice} className={t.choice === note.winner ? "font-semibold" : ""}>
                  <td className="font-mono">{t.choice}</td>
                  <td>{t.weight}</td>
                  <td>{t.ballots}</td>
                  <td>{t.confidence.toFixed(2)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {note.absent.length ? <div className="mt-1 text-xs">No ballot from: {note.absent.map((a) => `@${a}`).join(", ")}</div> : null}
        </div>
      );
    case "routed":
      return (
        <div
          className={`${card} border-teal-300 bg-teal-50 text-teal-950 dark:border-teal-800 dark:bg-teal-950/40 dark:text-teal-100`}
          data-testid="routing"
        >
          <div className="font-medium">{note.chosen.length ? `Routed to ${note.chosen.map((a) => `@${a}`).join(", ")}` : "Not routed"}</div>
          <div className="text-xs">{note.reason}</div>
          <ul className="mt-1 flex flex-wrap gap-1 text-xs">
            {note.candidates.map((c) => (
              <li key={c.agent} className="rounded bg-white/70 px-1.5 py-0.5 dark:bg-black/30">
                @{c.agent}: {c.score}
                {c.matched.length ? ` (${c.matched.join(", ")})` : ""}
              </li>
            ))}
          </ul>
        </div>
      );
    case "needs_person":
      return (
        <div
          className={`${card} border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950/40 dark:text-amber-100`}
          role="status"
        >
          A person is needed: {note.reason}
        </div>
      );
    case "ballot_rejected":
      return (
        <div className="text-xs text-rose-700 dark:text-rose-300">
          The ballot of @{note.agent} was rejected: {note.errors.join("; ")}
        </div>
      );
    case "step":
      return (
        <div className="text-xs text-zinc-700 dark:text-zinc-300">
          Step <span className="font-mono">{note.step}</span> → @{note.agent}
          {note.visit > 1 ? ` (visit ${note.visit})` : ""}
          {note.attempt > 1 ? ` (attempt ${note.attempt})` : ""}
        </div>
      );
    case "sop_completed":
      return (
        <div
          className={`${card} border-emerald-300 bg-emerald-50 text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950/40 dark:text-emerald-100`}
          data-testid="sop-completed"
        >
          Procedure completed: <span className="font-mono">{note.steps.join(" → ")}</span>
        </div>
      );
    case "mention_unknown":
      return (
        <div className="text-xs text-zinc-700 dark:text-zinc-300">
          Unknown agents mentioned (not called): {note.names.map((n) => `@${n}`).join(", ")}
        </div>
      );
  }
}
