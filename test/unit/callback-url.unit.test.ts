// After sign-in only same-origin paths: the open redirects found by trying (a tab or newline
// that a browser strips, turning "/\t/host" into the protocol-relative "//host") fall back.
import { describe, expect, it } from "vitest";
import { safeCallbackPath } from "../../lib/callback-url";

describe("safeCallbackPath", () => {
  it("keeps paths of this site, with query and fragment; takes only the path of an absolute URL", () => {
    expect(safeCallbackPath("/sessions/s-1?tab=diff#top")).toBe("/sessions/s-1?tab=diff#top");
    expect(safeCallbackPath("http://localhost:3000/settings")).toBe("/settings");
    expect(safeCallbackPath("/a/../settings")).toBe("/settings");
  });

  it.each([
    ["/\t/evil.example/phish"],
    ["/\n/evil.example/phish"],
    ["/\r\n/evil.example"],
    ["//evil.example/phish"],
    ["/\\evil.example"],
    ["/%5C%5Cevil.example".replace(/%5C/g, "\\")],
    ["https://evil.example"],
    ["javascript:alert(1)"],
    ["evil.example"],
    [""],
  ])("refuses %j (the fallback instead)", (value) => {
    const result = safeCallbackPath(value, "/");
    expect(result).toBe("/");
  });

  it("whatever it returns is a same-origin path once a browser reads it", () => {
    for (const value of ["/\t/x", "/%09/x", "/%0a/x", "//x", "/./x", "/x/..//y"]) {
      const path = safeCallbackPath(value);
      expect(new URL(path, "https://catcafe.example").origin).toBe("https://catcafe.example");
    }
  });
});
