// Passwords long enough but easy to guess are refused with the reason: the
// most common ones, one repeated character, a run along the alphabet, digits or a keyboard row.
import { describe, expect, it } from "vitest";
import { weakPasswordReason, ZPassword } from "../../server/auth/passwords";

describe("ZPassword", () => {
  it.each<[string, RegExp]>([
    ["password123", /most common/],
    ["Password123", /most common/],
    ["1234567890", /most common|consecutive/],
    ["qwertyuiop", /most common|consecutive/],
    ["aaaaaaaaaaaa", /repeats one character/],
    ["abcdefghijkl", /consecutive/],
    ["9876543210", /consecutive/],
    ["ASDFGHJKL", /consecutive/],
  ])("refuses %j: %s", (password, reason) => {
    const parsed = ZPassword.safeParse(password);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.message).join("; ")).toMatch(reason);
  });

  it.each(["correct horse battery", "dashboard-e2e-password", "viewer-password-123", "abcdefghij-and-more"])("accepts %j", (password) => {
    expect(weakPasswordReason(password)).toBeNull();
    expect(ZPassword.safeParse(password).success).toBe(true);
  });

  it("still says when a password is too short", () => {
    expect(ZPassword.safeParse("short").error?.issues[0]?.message).toBe("at least 10 characters");
  });
});
