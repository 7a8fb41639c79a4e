// Request paths decoded strictly (server/api/paths.ts): what proxy.ts refuses before any route.
import { describe, expect, it } from "vitest";
import { pathProblem } from "../../server/api/paths";

describe("pathProblem", () => {
  it("takes what decodes: plain ids, escaped slashes and spaces, any valid UTF-8", () => {
    for (const path of ["/api/sessions/s-0123abcd/export", "/api/sessions/a%2Fb/export", "/sessions/a%20b", "/%E2%9C%93", "/", ""])
      expect([path, pathProblem(path)]).toEqual([path, null]);
  });

  it("refuses a segment that is not UTF-8 (a lone surrogate's bytes, a stray byte, a cut escape), naming it", () => {
    for (const segment of ["%ED%A0%80", "%FF", "%E2%9C", "%", "%zz"])
      expect(pathProblem(`/api/sessions/${segment}/export`)).toBe(`the path segment "${segment}" is not percent-encoded UTF-8`);
  });

  it("refuses a NUL or another control character, naming the segment", () => {
    for (const segment of ["a%00b", "%0A", "x%1Fy", "%7F"])
      expect(pathProblem(`/api/tasks/${segment}/confirm`)).toBe(`the path segment "${segment}" holds a control character (such as NUL)`);
  });
});
