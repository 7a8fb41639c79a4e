// The task fold's snapshot key must change whenever the fold does (server/workflow/task-fold.ts):
// this pins the text of state.ts (evolve and TaskState), so that changing it fails here
// until someone has asked "do snapshots folded by the old code still hold?" — if not, bump
// TASK_FOLD_VERSION — and then updates the pinned hash.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FOLD_VERSION } from "../../server/workflow/task-fold";

const STATE_TS = path.resolve(import.meta.dirname, "../../server/workflow/state.ts");
const PINNED = { version: 1, stateTs: "a1d64ec6d4a2d10e874fe752065f9a06210873c3a44455aeb29232f5b18ba836" };

describe("task fold version", () => {
  it("state.ts is the text TASK_FOLD_VERSION was last decided for", () => {
    const text = fs.readFileSync(STATE_TS, "utf8").replace(/\r\n/g, "\n");
    const hash = crypto.createHash("sha256").update(text).digest("hex");
    expect(
      { version: TASK_FOLD_VERSION, stateTs: hash },
      "server/workflow/state.ts changed: if evolve folds differently or TaskState changed shape, bump TASK_FOLD_VERSION " +
        "(stale replay snapshots are then ignored); then pin the new hash here",
    ).toEqual(PINNED);
  });
});
