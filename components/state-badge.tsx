// A session state as a compact pill, coloured by the state's tone: the label people read,
// the state id on hover (title) and in data-state for whoever selects by it.
import { stateLabel } from "@/lib/state-labels";
import { stateTone } from "@/lib/state-tone";
import { TONE_BADGE, TONE_FILL } from "./tone-classes";

export function StateBadge({ state }: { state: string }) {
  const tone = stateTone(state);
  const label = stateLabel(state);
  return (
    <span
      title={label === state ? state : `${label} (${state})`}
      data-state={state}
      className={`inline-flex max-w-full items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${TONE_BADGE[tone]}`}
    >
      <span
        className={`size-1.5 shrink-0 rounded-full ${TONE_FILL[tone]} ${tone === "active" ? "motion-safe:animate-pulse-brief" : ""}`}
        aria-hidden
      />
      <span className="truncate">{label}</span>
    </span>
  );
}
