// How a time window's bound reads (lib/time-window.ts): a span back from now, a day, or an
// instant with its zone; anything else is refused with the forms it takes.
import { describe, expect, it } from "vitest";
import { instantOf } from "../../lib/time-window";

const now = new Date("2026-11-29T12:00:00Z");

describe("instantOf", () => {
  it("counts spans back from now: hours, days, weeks", () => {
    expect(instantOf("12h", now)).toBe("2026-11-29T00:00:00.000Z");
    expect(instantOf("30d", now)).toBe("2026-10-30T12:00:00.000Z");
    expect(instantOf("2w", now)).toBe("2026-11-15T12:00:00.000Z");
  });

  it("takes a day as midnight UTC, and an instant with its zone", () => {
    expect(instantOf("2026-11-01", now)).toBe("2026-11-01T00:00:00.000Z");
    expect(instantOf("2026-11-01T08:00:00+02:00", now)).toBe("2026-11-01T06:00:00.000Z");
  });

  it.each(["yesterday", "30", "30m", "2026-11-01T08:00:00", "2026-13-45", ""])("refuses %j, naming the forms it takes", (spec) => {
    expect(() => instantOf(spec, now)).toThrow(/is not a time: write a span back from now \(30d, 12h, 2w\) or a date/);
  });
});
