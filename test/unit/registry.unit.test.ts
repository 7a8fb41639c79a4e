import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ERROR_CLASSES } from "../../server/errors";
import { appRegistry, eventCatalog } from "../../server/events/catalog";
import { defineEvent, EventRegistry } from "../../server/events/registry";

describe("event registry", () => {
  const registry = new EventRegistry({
    Renamed: defineEvent({
      version: 3,
      schema: z.object({ name: z.object({ first: z.string(), last: z.string() }) }),
      upcasters: {
        1: (d) => ({ name: (d as { n: string }).n }),
        2: (d) => {
          const [first = "", last = ""] = (d as { name: string }).name.split(" ");
          return { name: { first, last } };
        },
      },
      summary: (d) => `Renamed to ${d.name.first} ${d.name.last}`,
    }),
    NoUpcaster: defineEvent({ version: 2, schema: z.object({ a: z.number() }) }),
  });

  it("upcasts step by step from any older version to the current one", () => {
    expect(registry.decode("Renamed", { n: "Ada Lovelace" }, 1)).toEqual({ name: { first: "Ada", last: "Lovelace" } });
    expect(registry.decode("Renamed", { name: "Grace Hopper" }, 2)).toEqual({ name: { first: "Grace", last: "Hopper" } });
  });

  it("names the missing upcaster and the invalid field", () => {
    expect(() => registry.decode("NoUpcaster", { a: 1 }, 1)).toThrow("no upcaster for NoUpcaster from version 1 to 2");
    expect(() => registry.encode("NoUpcaster", { a: "x" })).toThrow(/invalid NoUpcaster event: a: /);
    expect(() => registry.encode("Nope", {})).toThrow('unknown event type "Nope"');
  });

  it("lists every problem of an event, each with its path, the root's as (root)", () => {
    expect(() => registry.encode("Renamed", { name: { first: 1, last: 2 } })).toThrow(
      "invalid Renamed event: name.first: Invalid input: expected string, received number; name.last: Invalid input: expected string, received number",
    );
    expect(() => registry.encode("NoUpcaster", 5)).toThrow(
      "invalid NoUpcaster event: (root): Invalid input: expected object, received number",
    );
  });

  it("a stored event that does not match its schema is an internal error naming the field", () => {
    const err = (() => {
      try {
        registry.decode("Renamed", { name: { first: "Ada" } }, 3);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toMatchObject({ code: "INTERNAL" });
    expect((err as Error).message).toMatch(/^stored Renamed event does not match its schema: name\.last: /);
    expect(registry.decode("NoUpcaster", { a: 1 }, 2)).toEqual({ a: 1 });
    expect(() => registry.decode("NoUpcaster", { a: "one" }, 2)).toThrow(/^stored NoUpcaster event does not match its schema: a: /);
  });

  it("stamps the current schema version and summarizes to one short line", () => {
    expect(registry.encode("Renamed", { name: { first: "A", last: "B" } }).schemaVersion).toBe(3);
    expect(registry.summarize("Renamed", { name: { first: "A", last: "B" } })).toBe("Renamed to A B");
    expect(appRegistry.summarize("OperatorMessagePosted", { text: "x".repeat(500) })).toHaveLength(200);
  });

  it("every failure event carries a class from the closed error taxonomy", () => {
    const schema = eventCatalog.StepFailed.schema;
    const base = { stepId: "9b2f7d7e-9a53-4a57-9a4c-1f2b3c4d5e6f", attempt: 1, message: "m", retryAt: null };
    for (const errorClass of ERROR_CLASSES) expect(schema.safeParse({ ...base, errorClass }).success).toBe(true);
    expect(schema.safeParse({ ...base, errorClass: "something_else" }).success).toBe(false);
  });
});
