// The header's "current page" rule (lib/nav.ts): "New task" is /sessions/new only, never
// the session pages under /sessions; sessions, replays and fork trees count as the
// dashboard; every settings section counts as Settings.
import { describe, expect, it } from "vitest";
import { currentNavHref, NAV_ITEMS } from "../../lib/nav";

describe("currentNavHref", () => {
  it("marks New task on /sessions/new only", () => {
    expect(currentNavHref("/sessions/new")).toBe("/sessions/new");
    expect(currentNavHref("/sessions/new/")).toBe("/sessions/new");
    for (const path of ["/sessions/s-0123456789ab", "/sessions/s-0123456789ab/replay", "/sessions/s-0123456789ab/tree", "/sessions/newer"])
      expect(currentNavHref(path), path).not.toBe("/sessions/new");
  });

  it("counts a session and its replay and fork tree as the dashboard", () => {
    expect(currentNavHref("/")).toBe("/");
    expect(currentNavHref("/sessions/s-0123456789ab")).toBe("/");
    expect(currentNavHref("/sessions/s-0123456789ab/replay")).toBe("/");
    expect(currentNavHref("/sessions/s-0123456789ab/tree")).toBe("/");
  });

  it("counts every settings section as Settings, and nothing else", () => {
    expect(currentNavHref("/settings")).toBe("/settings");
    expect(currentNavHref("/settings/brains")).toBe("/settings");
    expect(currentNavHref("/settingsx")).toBeNull();
    expect(currentNavHref("/signin")).toBeNull();
  });

  it("counts the conversations list and every conversation as Chat", () => {
    expect(currentNavHref("/conversations")).toBe("/conversations");
    expect(currentNavHref("/conversations/c-0123456789ab")).toBe("/conversations");
    expect(currentNavHref("/conversationsx")).toBeNull();
  });

  it("always names one of the header's items", () => {
    const hrefs = NAV_ITEMS.map((i) => i.href);
    for (const path of ["/", "/sessions/new", "/sessions/s-1", "/settings/projects", "/conversations/c-1"])
      expect(hrefs).toContain(currentNavHref(path));
  });
});
