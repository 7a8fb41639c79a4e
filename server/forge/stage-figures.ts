// A staged session's stages in numbers (req F1, W12): for each stage it entered, how often the
// stage ran, the iteration its cap counts, whether it completed, and its critic's verdicts.
// Derived once, from the task's fold; the Forge page and `forge status` (forge.status), the
// session's summary panel and summary.json all read it, so their counts agree.
import type { StartedTask } from "../workflow/engine";
import type { Pipeline } from "./state";

export interface StageVerdicts {
  pass: number;
  revise: number;
  escalate: number;
}

export interface StageFigures {
  name: string;
  /** Each time the stage's work was scheduled (a run of Check after a fix loop counts). */
  runs: number;
  /** The iteration the stage's cap counts (it does not move when a stage is entered again without one). */
  iteration: number;
  completed: boolean;
  /** The critic's decisions on the stage, as recorded (a pass the rules overruled is a revise). */
  verdicts: StageVerdicts;
}

export const NO_VERDICTS: StageVerdicts = { pass: 0, revise: 0, escalate: 0 };

/** The stages the task entered, in the order it first entered them; empty for an unstaged workflow. */
export function stageFigures(task: StartedTask<Pipeline>): StageFigures[] {
  const { stages, pipeline } = task;
  const names = [...new Set([...Object.keys(stages.iterations), ...Object.keys(stages.runs), ...stages.completed])];
  return names.map((name) => ({
    name,
    runs: stages.runs[name] ?? 0,
    iteration: stages.iterations[name] ?? 0,
    completed: stages.completed.includes(name),
    verdicts: (pipeline.critiques[name] ?? []).reduce((v, c) => ({ ...v, [c.decision]: v[c.decision] + 1 }), NO_VERDICTS),
  }));
}

/** The verdicts of every stage added up. */
export function allVerdicts(figures: StageFigures[]): StageVerdicts {
  return figures.reduce(
    (v, s) => ({ pass: v.pass + s.verdicts.pass, revise: v.revise + s.verdicts.revise, escalate: v.escalate + s.verdicts.escalate }),
    NO_VERDICTS,
  );
}
