// The judge's reply (docs/bake-off.md, "The judge"): strict JSON checked by zod like every
// verdict, then against the bake-off's contenders — an unknown id, an id ranked twice, or a
// winner not ranked first is schema_invalid as much as JSON that does not parse. And the
// contenders as a person types them (`--bake-off a,b:model`).
import { describe, expect, it } from "vitest";
import { parseContenders } from "../../lib/bake-off";
import { parseRecommendation } from "../../server/bake-off/judge";

const IDS = ["c1", "c2", "c3"];
const reply = (value: unknown) => JSON.stringify(value);

describe("the judge's reply", () => {
  it("a valid recommendation is taken as it is (a ```json fence tolerated)", () => {
    const value = { winner: "c2", ranking: ["c2", "c3"], reasons: ["smallest diff"] };
    expect(parseRecommendation(reply(value), IDS)).toEqual({ ok: true, value });
    expect(parseRecommendation("```json\n" + reply(value) + "\n```", IDS)).toEqual({ ok: true, value });
  });

  it.each([
    ["not JSON", "c2 is best", /^not valid JSON/],
    ["a missing field", reply({ winner: "c2", ranking: ["c2"] }), /^reasons: /],
    ["an extra field", reply({ winner: "c2", ranking: ["c2"], reasons: ["x"], score: 3 }), /Unrecognized key/],
    ["an id that is no contender id", reply({ winner: "c7", ranking: ["c7"], reasons: ["x"] }), /^winner: a contender id/],
    [
      "an unknown contender",
      reply({ winner: "c4", ranking: ["c4", "c1"], reasons: ["x"] }),
      /^unknown contender c4 \(contenders: c1, c2, c3\)$/,
    ],
    [
      "a contender ranked twice",
      reply({ winner: "c1", ranking: ["c1", "c2", "c1"], reasons: ["x"] }),
      /^ranking: c1 ranked more than once$/,
    ],
    [
      "a winner not ranked first",
      reply({ winner: "c2", ranking: ["c1", "c2"], reasons: ["x"] }),
      /^ranking: the winner c2 must be ranked first$/,
    ],
  ])("%s is refused", (_what, text, error) => {
    const parsed = parseRecommendation(text, IDS);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.errors).toEqual(expect.arrayContaining([expect.stringMatching(error)]));
  });
});

describe("contenders as typed", () => {
  it("coder or coder:model, comma-separated, blanks skipped", () => {
    expect(parseContenders("claude-coder, codex-coder:o3,,gemini-coder:")).toEqual([
      { coder: "claude-coder" },
      { coder: "codex-coder", model: "o3" },
      { coder: "gemini-coder" },
    ]);
  });
});
