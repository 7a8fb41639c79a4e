// The conversation fold's snapshot key must change whenever the fold does
// (server/conversations/fold.ts): what a conversation folds to is decided by fold.ts and by the
// modes, which the fold asks again for every message and reply (server/modes). This pins their
// text, so that changing any of them fails here until someone has asked "do snapshots folded by
// the old code still hold?" — if not, bump CONVERSATION_FOLD_VERSION — and then updates the
// pinned hash.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONVERSATION_FOLD_VERSION } from "../../server/conversations/fold";

const ROOT = path.resolve(import.meta.dirname, "../..");
const FOLD_FILES = [
  "server/conversations/fold.ts",
  ...fs
    .readdirSync(path.join(ROOT, "server/modes"))
    .filter((f) => f.endsWith(".ts"))
    .sort()
    .map((f) => `server/modes/${f}`),
];
const PINNED = { version: 3, files: "de9702d6f78f46023e47eae0f959e5f0f15cfed21f8986d28f4c286d244980a2" };

describe("conversation fold version", () => {
  it("fold.ts and the modes are the text CONVERSATION_FOLD_VERSION was last decided for", () => {
    const hash = crypto.createHash("sha256");
    for (const file of FOLD_FILES) hash.update(`${file}\n`).update(fs.readFileSync(path.join(ROOT, file), "utf8").replace(/\r\n/g, "\n"));
    expect(
      { version: CONVERSATION_FOLD_VERSION, files: hash.digest("hex") },
      `${FOLD_FILES.join(", ")} changed: if a conversation folds differently or its record changed shape, bump ` +
        "CONVERSATION_FOLD_VERSION (stale replay snapshots are then ignored); then pin the new hash here",
    ).toEqual(PINNED);
  });
});
