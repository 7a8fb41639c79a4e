// The workflow engine's fold (state.ts `evolveWith`, with an extension's slice) as a replay
// fold with snapshots (server/events/snapshots.ts). TASK_FOLD_VERSION is part of every
// snapshot's key: bump it whenever the fold's behaviour or TaskState's shape changes — the
// engine's or the extension's slice's — and snapshots folded by the old code are ignored from
// then on. test/unit/task-fold.unit.test.ts pins the text of state.ts and of Forge's slice
// (server/forge/state.ts) so that no change to them goes by without that question being asked.
import type { StreamFold } from "../events/snapshots";
import { evolveWith, initialTaskState, type SliceFold, type TaskState } from "./state";

/** 2: the Forge pipeline's slice apart from the engine's stages, person needed and budget. */
/** 3: runs per stage; Forge's versions per artifact (with the person's edits a draft kept) and critiques' decisions. */
/** 4: the thread keeps its window only (state.ts THREAD_SHOWN, with threadCount), so a long session's state stays small. */
/** 5: where the latest diff and each Forge artifact sit in the thread (lastDiffAfter, shownAfter), so prompts show them there. */
export const TASK_FOLD_VERSION = 5;

/** The task fold of the engine composed with `slice`. */
export function taskFoldOf<S>(slice: SliceFold<S>): StreamFold<TaskState<S>> {
  return {
    name: "task",
    version: TASK_FOLD_VERSION,
    initial: initialTaskState,
    evolve: (state, event) => evolveWith(slice, state, event),
  };
}
