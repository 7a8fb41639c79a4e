// The procedure builders (server/api/trpc.ts) on a router of their own: who each lets through,
// what a refusal says, how domain errors and unstorable text become tRPC errors, and what the
// error formatter puts on the wire. No database: the builders never touch the dependencies.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Role } from "../../lib/roles";
import type { ApiDeps, Context } from "../../server/api/context";
import { INTERNAL_MESSAGE } from "../../server/api/errors";
import { adminProcedure, createCallerFactory, operatorProcedure, publicProcedure, router, viewerProcedure } from "../../server/api/trpc";
import { AppError } from "../../server/errors";

const ZName = z.object({ name: z.string().min(2) });

/** What each procedure ran with; a refused call leaves it untouched. */
const ran: string[] = [];

const testRouter = router({
  open: publicProcedure.query(({ ctx }) => ctx.user?.id ?? "anonymous"),
  read: viewerProcedure.query(({ ctx }) => ctx.user.id),
  operate: operatorProcedure.mutation(({ ctx }) => ctx.user.id),
  administer: adminProcedure.mutation(({ ctx }) => ctx.user.id),
  save: publicProcedure.input(ZName).mutation(({ input }) => {
    ran.push(input.name);
    return input.name;
  }),
  ping: publicProcedure.mutation(() => "pong"),
  missing: publicProcedure.query(() => {
    throw new AppError("NOT_FOUND", "no such cat");
  }),
  misnamed: publicProcedure.query(() => {
    throw new AppError("INVALID_INPUT", "the cat's name is taken", { fieldErrors: { name: ["taken"] } });
  }),
  unparsed: publicProcedure.query(() => ZName.parse({ name: "" })),
  broken: publicProcedure.query(() => {
    throw new Error("connection string postgres://secret@db");
  }),
});

const deps = {} as ApiDeps;
const userOf = (role: Role) => ({ id: `${role}-id`, email: `${role}@example.com`, name: role, role, via: "session" as const });
const contextFor = (role: Role | null): Context => ({ ...deps, user: role === null ? null : userOf(role) });
const caller = (role: Role | null) => createCallerFactory(testRouter)(contextFor(role));

/** One HTTP call through tRPC's fetch adapter, so the error formatter shapes the answer. */
async function overHttp(path: string, init: { method: "GET" | "POST"; body?: unknown }) {
  const res = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req: new Request(`http://cafe.test/api/trpc/${path}`, {
      method: init.method,
      headers: { "content-type": "application/json" },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    }),
    router: testRouter,
    createContext: () => contextFor(null),
  });
  return { status: res.status, body: (await res.json()) as { error?: { message: string; data: Record<string, unknown> } } };
}

describe("procedure builders", () => {
  it("a public procedure serves anyone and sees who is signed in", async () => {
    await expect(caller(null).open()).resolves.toBe("anonymous");
    await expect(caller("viewer").open()).resolves.toBe("viewer-id");
  });

  it("a viewer procedure refuses an anonymous caller as UNAUTHORIZED and hands on the signed-in user", async () => {
    await expect(caller(null).read()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "sign in, or send an API token as `Authorization: Bearer ...`",
    });
    await expect(caller("viewer").read()).resolves.toBe("viewer-id");
  });

  it("an operator procedure refuses a viewer as FORBIDDEN, naming both roles, and lets operators and admins in", async () => {
    await expect(caller(null).operate()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(caller("viewer").operate()).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: "this needs the operator role (you are viewer)",
    });
    await expect(caller("operator").operate()).resolves.toBe("operator-id");
    await expect(caller("admin").operate()).resolves.toBe("admin-id");
  });

  it("an admin procedure refuses an operator as FORBIDDEN and lets an admin in", async () => {
    await expect(caller(null).administer()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(caller("viewer").administer()).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(caller("operator").administer()).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: "this needs the admin role (you are operator)",
    });
    await expect(caller("admin").administer()).resolves.toBe("admin-id");
  });

  it("domain errors become the matching tRPC error; anything else stays internal", async () => {
    await expect(caller(null).missing()).rejects.toMatchObject({ code: "NOT_FOUND", message: "no such cat" });
    await expect(caller(null).unparsed()).rejects.toMatchObject({ code: "BAD_REQUEST", message: "invalid input" });
    await expect(caller(null).broken()).rejects.toMatchObject({ code: "INTERNAL_SERVER_ERROR" });
  });

  it("text PostgreSQL cannot store is a BAD_REQUEST naming the field, before the procedure runs", async () => {
    ran.length = 0;
    await expect(caller(null).save({ name: "Tom\u0000" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: "name: contains a NUL byte",
    });
    await expect(caller(null).save({ name: "Tom\uD800" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: /^name: .*lone surrogate/,
    });
    expect(ran).toEqual([]);
    await expect(caller(null).save({ name: "Tom" })).resolves.toBe("Tom");
    expect(ran).toEqual(["Tom"]);
  });

  it("a procedure without input answers a bodiless POST", async () => {
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req: new Request("http://cafe.test/api/trpc/ping", { method: "POST", headers: { "content-type": "application/json" } }),
      router: testRouter,
      createContext: () => contextFor(null),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: { data: "pong" } });
  });
});

describe("the error formatter", () => {
  it("bad input reads as its first problems, with zod's flattened field errors", async () => {
    const { status, body } = await overHttp("save", { method: "POST", body: { name: "T" } });
    expect(status).toBe(400);
    expect(body.error?.message).toMatch(/^invalid input: name: /);
    expect(body.error?.data).toEqual({
      code: "BAD_REQUEST",
      httpStatus: 400,
      path: "save",
      zodError: { formErrors: [], fieldErrors: { name: [expect.stringMatching(/2/)] } },
    });
  });

  it("a domain refusal that names its fields carries them as field errors", async () => {
    const { status, body } = await overHttp("misnamed", { method: "GET" });
    expect(status).toBe(400);
    expect(body.error?.message).toBe("the cat's name is taken");
    expect(body.error?.data).toEqual({
      code: "BAD_REQUEST",
      httpStatus: 400,
      path: "misnamed",
      zodError: { formErrors: [], fieldErrors: { name: ["taken"] } },
    });
  });

  it("an unknown failure keeps its details in the server log", async () => {
    const { status, body } = await overHttp("broken", { method: "GET" });
    expect(status).toBe(500);
    expect(body.error?.message).toBe(INTERNAL_MESSAGE);
    expect(JSON.stringify(body)).not.toContain("secret@db");
    expect(body.error?.data).toEqual({ code: "INTERNAL_SERVER_ERROR", httpStatus: 500, path: "broken", zodError: null });
  });

  it("a refusal without fields has no field errors", async () => {
    const { status, body } = await overHttp("missing", { method: "GET" });
    expect(status).toBe(404);
    expect(body.error).toEqual({
      message: "no such cat",
      code: expect.any(Number),
      data: { code: "NOT_FOUND", httpStatus: 404, path: "missing", zodError: null },
    });
  });
});
