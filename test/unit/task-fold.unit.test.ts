// The task fold's snapshot key must change whenever the fold does (server/workflow/task-fold.ts):
// this pins the text of state.ts (evolve and TaskState) and of Forge's slice of a task
// (server/forge/state.ts, folded with it), so that changing either fails here until someone
// has asked "do snapshots folded by the old code still hold?" — if not, bump
// TASK_FOLD_VERSION — and then updates the pinned hashes.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FOLD_VERSION } from "../../server/workflow/task-fold";

const STATE_TS = path.resolve(import.meta.dirname, "../../server/workflow/state.ts");
const FORGE_STATE_TS = path.resolve(import.meta.dirname, "../../server/forge/state.ts");
const PINNED = {
  version: 5,
  stateTs: "af4b724849d245a8f2b698eac8c35047a8185e99d669480b2edf87925ce3a36e",
  forgeStateTs: "0879c0f8fb54850f9e99b8d53b2cbcfa5a90e537b7cd097433162074aa280be3",
};

function hashOf(file: string): string {
  const text = fs.readFileSync(file, "utf8").replace(/\r\n/g, "\n");
  return crypto.createHash("sha256").update(text).digest("hex");
}

describe("task fold version", () => {
  it("state.ts and Forge's state.ts are the texts TASK_FOLD_VERSION was last decided for", () => {
    expect(
      { version: TASK_FOLD_VERSION, stateTs: hashOf(STATE_TS), forgeStateTs: hashOf(FORGE_STATE_TS) },
      "server/workflow/state.ts or server/forge/state.ts changed: if the fold folds differently or TaskState (or Forge's " +
        "slice) changed shape, bump TASK_FOLD_VERSION (stale replay snapshots are then ignored); then pin the new hashes here",
    ).toEqual(PINNED);
  });
});
