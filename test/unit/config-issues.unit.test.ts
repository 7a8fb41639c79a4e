// The keys an "unknown key" message offers (server/config/issues.ts): found by walking the
// schema along the path through wrappers (optional, default, nullable), transforms,
// arrays and records, and, in a discriminated union, the member the value's discriminator names.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { allowedKeysAt } from "../../server/config/issues";

const ZCat = z.strictObject({ kind: z.literal("cat"), name: z.string(), lives: z.number().default(9) });
const ZDog = z.strictObject({ kind: z.literal("dog"), name: z.string(), breed: z.string().optional() });
const ZFile = z.strictObject({
  pets: z.array(z.discriminatedUnion("kind", [ZCat, ZDog])),
  homes: z.record(z.string(), z.strictObject({ street: z.string(), rooms: z.number() }).optional()).default({}),
  owner: z
    .strictObject({ email: z.string() })
    .nullable()
    .transform((o) => o),
  note: z.union([z.string(), z.strictObject({ text: z.string() })]).optional(),
});

describe("allowedKeysAt", () => {
  it("the root object's keys", () => {
    expect(allowedKeysAt(ZFile, {}, [])).toEqual(["pets", "homes", "owner", "note"]);
  });

  it("picks the member of a discriminated union that the value's discriminator names", () => {
    const file = { pets: [{ kind: "dog" }, { kind: "cat" }] };
    expect(allowedKeysAt(ZFile, file, ["pets", 0])).toEqual(["kind", "name", "breed"]);
    expect(allowedKeysAt(ZFile, file, ["pets", 1])).toEqual(["kind", "name", "lives"]);
  });

  it("no member for an unknown or missing discriminator, or a value that is no object", () => {
    expect(allowedKeysAt(ZFile, { pets: [{ kind: "bird" }] }, ["pets", 0])).toBeNull();
    expect(allowedKeysAt(ZFile, { pets: [{}] }, ["pets", 0])).toBeNull();
    expect(allowedKeysAt(ZFile, { pets: ["cat"] }, ["pets", 0])).toBeNull();
  });

  it("through a record and the wrappers around its values (default, optional)", () => {
    expect(allowedKeysAt(ZFile, { homes: { a: {} } }, ["homes", "a"])).toEqual(["street", "rooms"]);
  });

  it("through a transform and nullable", () => {
    expect(allowedKeysAt(ZFile, { owner: {} }, ["owner"])).toEqual(["email"]);
  });

  it("a plain union takes its first object member", () => {
    expect(allowedKeysAt(ZFile, { note: {} }, ["note"])).toEqual(["text"]);
  });

  it("null where the path leads to no object schema", () => {
    expect(allowedKeysAt(ZFile, {}, ["pets", 0, "name"])).toBeNull();
    expect(allowedKeysAt(ZFile, {}, ["nowhere"])).toBeNull();
    expect(allowedKeysAt(ZFile, {}, ["owner", "email", "deeper"])).toBeNull();
  });
});
