// The workflow engine's fold (state.ts `evolve`) as a replay fold with snapshots
// (server/events/snapshots.ts). TASK_FOLD_VERSION is part of every snapshot's key: bump it
// whenever evolve's behaviour or TaskState's shape changes, and snapshots folded by the old
// code are ignored from then on. test/unit/task-fold.unit.test.ts pins state.ts's text so
// that no change to it goes by without that question being asked.
import type { StreamFold } from "../events/snapshots";
import { evolve, initialTaskState, type TaskState } from "./state";

export const TASK_FOLD_VERSION = 1;

export const taskFold: StreamFold<TaskState> = {
  name: "task",
  version: TASK_FOLD_VERSION,
  initial: initialTaskState,
  evolve,
};
