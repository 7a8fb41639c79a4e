// Hostile input at every procedure: each query and mutation of the router (read from the router
// itself) is sent, over HTTP as a client sends it, its input with one field at a time (and then
// the whole input) replaced by a value built to break something: integers past what a column
// holds or a JavaScript number keeps exactly, negative ones, NUL, a lone surrogate, a 1 MB
// string, JSON nested 10,000 deep, the wrong type. No answer is a 500, and a refusal as bad
// input names the field it refuses.
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { commandExamples, inputFields, proceduresOf } from "../helpers/command-examples";
import { watchErrorLog } from "../helpers/error-log";
import { createTestDatabase } from "../helpers/db";
import { createHarness } from "../helpers/tasks";

const errorLog = watchErrorLog();
let api: ApiFixture;
let admin: CurrentUser;
let cookie: string;
let examples: Record<string, () => Promise<unknown>>;
let sessionId: string;
let projectId: string;

beforeAll(async () => {
  const db = await createTestDatabase();
  api = createApiFixture(db);
  const h = createHarness(db);
  admin = await api.user("admin");
  cookie = await api.sessionCookie(admin.id);
  projectId = await h.project("fuzz", {
    coder: [{ reply: "p" }],
    reviewer: [{ reply: "r" }],
    tester: [{ reply: "t" }],
    planner: [{ reply: "i" }],
  });
  examples = commandExamples({ api, admin, projectId, repo: h.repo });
  sessionId = (await api.caller(admin).tasks.start({ projectId, prompt: "Fix sum()", mode: "proposal" })).sessionId;
});

/** Stands for JSON nested DEPTH deep, put in the request's text (JSON.stringify itself cannot nest that deep). */
const DEEP = "\u0001deep";
const DEPTH = 10_000;
const asJson = (input: unknown) =>
  (JSON.stringify(input) ?? "null").replaceAll(JSON.stringify(DEEP), "[".repeat(DEPTH) + "]".repeat(DEPTH));

/** The values each field is replaced by, by name (for the failure message). */
const HOSTILE: Array<[string, () => unknown]> = [
  ["2^31", () => 2 ** 31],
  ["2^53-1", () => 2 ** 53 - 1],
  ["-1", () => -1],
  ["-2^53", () => -(2 ** 53)],
  ["1e308", () => 1e308],
  ["0.5", () => 0.5],
  ["NUL", () => "a\u0000b"],
  ["lone surrogate", () => "a\uD800b"],
  ["1 MB string", () => "x".repeat(1_000_000)],
  ["JSON nested 10,000 deep", () => DEEP],
  ["object", () => ({ nested: true })],
  ["array", () => ["x"]],
  ["null", () => null],
  ["true", () => true],
];

/** A call over HTTP as the signed-in admin's browser makes it: its status and error, if any. */
async function call(path: string, kind: "query" | "mutation", input: unknown) {
  const url = `http://cats.test/api/trpc/${path}`;
  const req =
    kind === "query"
      ? new Request(`${url}?input=${encodeURIComponent(asJson(input))}`, { headers: { cookie } })
      : new Request(url, {
          method: "POST",
          headers: { cookie, origin: "http://cats.test", "content-type": "application/json" },
          body: asJson(input),
        });
  const res = await handleTrpc(req, createContextFactory(api.source));
  const text = await res.text();
  const error =
    res.status >= 400
      ? (
          JSON.parse(text) as {
            error: { message: string; data: { code: string; zodError: { fieldErrors: Record<string, string[]> } | null } };
          }
        ).error
      : null;
  return {
    status: res.status,
    code: error?.data.code ?? null,
    message: error?.message ?? null,
    fields: Object.keys(error?.data.zodError?.fieldErrors ?? {}),
  };
}

/** The input each query is varied from, field by field: real values for the fields queries of ours have. */
const queryBase = (path: string): Record<string, unknown> => {
  const common = { sessionId, projectId, limit: 5, afterVersion: 0, atVersion: 1 };
  const more: Record<string, Record<string, unknown>> = {
    "forge.artifact": { hash: "0".repeat(64) },
    "live.older": { beforeVersion: 3 },
    "live.output": { blob: "0".repeat(64) },
    "sessions.compare": { a: sessionId, b: sessionId },
  };
  return { ...common, ...more[path] };
};

/** Hostile values for a procedure that takes no input: only what every input is checked for (text, depth). */
const FOR_NO_INPUT = new Set(["NUL", "lone surrogate", "JSON nested 10,000 deep"]);

async function fuzz(path: string, kind: "query" | "mutation", base: unknown) {
  const problems: string[] = [];
  // Every field the procedure's input has (varying others would only vary what it strips).
  const has = inputFields(path);
  const fields = has ?? [];
  // An input the procedure refuses as it is (a Forge edit of a session that has no such
  // artifact) is refused whatever one field holds: only a 500 counts then.
  const baseRefused = (await call(path, kind, base)).code === "BAD_REQUEST";
  for (const [name, value] of HOSTILE.filter(([n]) => has !== null || FOR_NO_INPUT.has(n))) {
    const variants: Array<[string, unknown]> = [
      ["(input)", value()],
      ...fields.map((f): [string, unknown] => [f, { ...(base as object), [f]: value() }]),
    ];
    for (const [field, input] of variants) {
      const answer = await call(path, kind, input);
      const what = `${path} with ${field} = ${name}: ${answer.status} ${answer.message ?? ""}`.slice(0, 300);
      if (answer.status >= 500) problems.push(what);
      // Bad input names its field: the field's name, or (for the whole input) where the schema first objected.
      else if (
        answer.code === "BAD_REQUEST" &&
        field !== "(input)" &&
        !baseRefused &&
        !answer.message?.includes(field) &&
        !answer.fields.includes(field)
      )
        problems.push(`${what} (names no ${field})`);
    }
  }
  return problems;
}

describe("hostile input at every procedure", () => {
  it.each(proceduresOf("mutation"))(
    "mutation %s: no 500, and bad input names its field",
    async (path) => {
      const example = examples[path];
      if (!example) throw new Error(`no example input for ${path}: add one to test/helpers/command-examples.ts`);
      expect(await fuzz(path, "mutation", await example())).toEqual([]);
    },
    120_000,
  );

  it.each(proceduresOf("query"))(
    "query %s: no 500, and bad input names its field",
    async (path) => {
      expect(await fuzz(path, "query", queryBase(path))).toEqual([]);
    },
    120_000,
  );
});

describe("the server log", () => {
  it("logged nothing above as an error: every refusal was answered as what it is", () => {
    expect(errorLog()).toEqual([]);
  });
});
