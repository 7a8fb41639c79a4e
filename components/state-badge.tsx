// A session state as a compact pill, coloured by the state's tone.
import { stateTone } from "@/lib/state-tone";
import { TONE_BADGE, TONE_FILL } from "./tone-classes";

export function StateBadge({ state }: { state: string }) {
  const tone = stateTone(state);
  return (
    <span
      title={state}
      className={`inline-flex max-w-full items-center gap-1.5 rounded-full px-2 py-0.5 font-mono text-xs font-medium ring-1 ring-inset whitespace-nowrap ${TONE_BADGE[tone]}`}
    >
      <span className={`size-1.5 shrink-0 rounded-full ${TONE_FILL[tone]} ${tone === "active" ? "animate-pulse" : ""}`} aria-hidden />
      <span className="truncate">{state}</span>
    </span>
  );
}
