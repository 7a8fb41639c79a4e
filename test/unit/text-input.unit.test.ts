// Text PostgreSQL cannot store, and input nested past any of ours, found anywhere in an input
// (server/api/text-input.ts): the first problem in document order, with its path.
import { describe, expect, it } from "vitest";
import { MAX_INPUT_DEPTH, unstorableText } from "../../server/api/text-input";

describe("unstorableText", () => {
  it("finds nothing in storable input of any shape", () => {
    expect(unstorableText({ a: ["x", { b: "✓ 😀" }], n: 1, t: true, z: null })).toBeNull();
    expect(unstorableText("plain")).toBeNull();
  });

  it("names the first problem in document order: a key before its value, an earlier item before a later one", () => {
    expect(unstorableText({ a: "ok", b: ["fine", "x\u0000"], c: "\uD800" })).toEqual({ path: "b.1", problem: "contains a NUL byte" });
    expect(unstorableText({ ["k\u0000"]: "\uD800" })).toEqual({ path: "(key)", problem: "contains a NUL byte" });
    expect(unstorableText({ a: { b: "\uDC00x" } })).toEqual({ path: "a.b", problem: "contains a lone surrogate (not valid Unicode)" });
    expect(unstorableText("\u0000")).toEqual({ path: "(input)", problem: "contains a NUL byte" });
  });

  it(`input nested deeper than ${MAX_INPUT_DEPTH} levels is refused at that depth, however deep it goes`, () => {
    const nest = (depth: number) => JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown;
    expect(unstorableText(nest(MAX_INPUT_DEPTH))).toBeNull();
    const deep = unstorableText(nest(200_000));
    expect(deep).toEqual({ path: Array(MAX_INPUT_DEPTH).fill("0").join("."), problem: `is nested deeper than ${MAX_INPUT_DEPTH} levels` });
  });
});
