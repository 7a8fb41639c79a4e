// Turns zod issues into configuration errors a person can act on: the JSON path of the
// field and a sentence naming what was expected and what was found (`expected a number,
// got a string`; `3 is out of range: must be at most 2`; `unknown key`).
import { z } from "zod";
import { formatJsonPath, type ConfigError } from "./errors";

type Issue = z.core.$ZodIssue;

export function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number") return Number.isInteger(value) ? "a whole number" : "a number";
  if (typeof value === "boolean") return "a boolean";
  if (typeof value === "string") return "a string";
  return typeof value;
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "a boolean (true or false)",
  array: "an array",
  object: "an object",
  record: "an object",
  null: "null",
};

/** A value quoted for a message, shortened so a long (or pasted) value does not flood it. */
export function quote(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : String(JSON.stringify(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function sizeMessage(issue: Extract<Issue, { code: "too_small" | "too_big" }>, value: unknown): string {
  const small = issue.code === "too_small";
  const limit = Number(small ? (issue as { minimum: number | bigint }).minimum : (issue as { maximum: number | bigint }).maximum);
  const inclusive = issue.inclusive !== false;
  switch (issue.origin) {
    case "number":
    case "int":
    case "bigint": {
      const bound = small
        ? inclusive
          ? `at least ${limit}`
          : `greater than ${limit}`
        : inclusive
          ? `at most ${limit}`
          : `less than ${limit}`;
      return `${quote(value)} is out of range: must be ${bound}`;
    }
    case "array":
    case "set":
      return small
        ? `must have at least ${limit} item${limit === 1 ? "" : "s"}`
        : `must have at most ${limit} item${limit === 1 ? "" : "s"}`;
    case "string":
      if (small && limit === 1) return "must not be empty";
      return small ? `must be at least ${limit} characters long` : `must be at most ${limit} characters long`;
    default:
      return issue.message;
  }
}

/**
 * The schema a wrapper holds (optional, nullable, default, prefault, catch, readonly, ...):
 * every such definition (`_zod.def`, zod 4 core's typed view for code that walks schemas)
 * names it `innerType`, so one checked read covers them all.
 */
function wrappedBy(schema: z.core.$ZodType): z.core.$ZodType | undefined {
  const def = schema._zod.def;
  return "innerType" in def && def.innerType instanceof z.core.$ZodType ? def.innerType : undefined;
}

/** The keys the object schema at `path` accepts (following the value to pick a union member), or null. */
export function allowedKeysAt(schema: z.ZodType, root: unknown, path: ReadonlyArray<PropertyKey>): string[] | null {
  let current: z.core.$ZodType | undefined = schema;
  let value: unknown = root;
  for (let depth = 0; current && depth < 64; depth++) {
    const inner = wrappedBy(current);
    if (inner) current = inner;
    else if (current instanceof z.ZodPipe) current = current.in;
    else if (current instanceof z.ZodUnion) {
      const disc: string | undefined = current instanceof z.ZodDiscriminatedUnion ? current.def.discriminator : undefined;
      const chosen: unknown = disc === undefined ? undefined : valueAt(value, [disc]);
      current = current.options.find((o): boolean => {
        if (!(o instanceof z.ZodObject)) return false;
        if (disc === undefined) return true;
        const literal: z.core.$ZodType | undefined = o.shape[disc];
        const values: ReadonlySet<unknown> | undefined = literal instanceof z.ZodLiteral ? literal.values : undefined;
        return values?.has(chosen) ?? false;
      });
    } else if (path.length === 0) {
      return current instanceof z.ZodObject ? Object.keys(current.shape) : null;
    } else {
      const [head, ...rest] = path;
      if (current instanceof z.ZodObject) current = current.shape[String(head)];
      else if (current instanceof z.ZodArray) current = current.element;
      else if (current instanceof z.ZodRecord) current = current.valueType;
      else return null;
      value = value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[head!] : undefined;
      path = rest;
    }
  }
  return null;
}

/** Distance between two short words, for "did you mean". */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The closest of `known` to `name` when it is plausibly a typo of it. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  return known
    .map((k) => ({
      k,
      d: editDistance(k.toLowerCase(), lower),
      prefix: k.length >= 3 && (lower.startsWith(k.toLowerCase()) || k.toLowerCase().startsWith(lower)),
    }))
    .filter((c) => c.d <= Math.max(2, Math.floor(lower.length / 3)) || c.prefix)
    .sort((a, b) => a.d - b.d)[0]?.k;
}

function unknownKeyMessage(key: string, allowed: string[] | null): string {
  const keys = allowed?.filter((k) => k !== "$schema") ?? [];
  const guess = closest(key, keys);
  if (guess) return `unknown key; did you mean "${guess}"?`;
  return keys.length ? `unknown key (allowed: ${keys.join(", ")})` : "unknown key";
}

/** One issue (at `prefix` + its own path) as zero or more configuration errors of `file`. */
function translate(file: string, issue: Issue, root: unknown, prefix: ReadonlyArray<PropertyKey>, schema: z.ZodType): ConfigError[] {
  const path = [...prefix, ...issue.path];
  const at = (p: ReadonlyArray<PropertyKey>, message: string): ConfigError => ({ file, path: formatJsonPath(p), message });
  const value = valueAt(root, path);
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((key) => at([...path, key], unknownKeyMessage(key, allowedKeysAt(schema, root, path))));
    case "invalid_type": {
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      if (value === undefined) return [at(path, `is required (${expected})`)];
      const shown = value !== null && typeof value !== "object" ? ` (${quote(value)})` : "";
      return [at(path, `expected ${expected}, got ${typeName(value)}${shown}`)];
    }
    case "too_small":
    case "too_big":
      return [at(path, sizeMessage(issue, value))];
    case "invalid_value": {
      const options = issue.values.map((v) => String(v));
      if (value === undefined) return [at(path, `is required (one of: ${options.join(", ")})`)];
      if (options.length === 1) return [at(path, `must be ${quote(issue.values[0])} (got ${quote(value)})`)];
      return [at(path, `${quote(value)} is not one of: ${options.join(", ")}`)];
    }
    case "invalid_union": {
      const union = issue as Issue & { note?: string; options?: unknown[]; errors: Issue[][] };
      if (union.note === "No matching discriminator") {
        const options = (union.options ?? []).map(String).join(", ");
        if (value === undefined) return [at(path, `is required (one of: ${options})`)];
        return [at(path, `${quote(value)} is not one of: ${options}`)];
      }
      // Plain union: report the branch that got furthest (the one that accepted the type).
      const branches = union.errors.filter((errors) => !errors.some((e) => e.code === "invalid_type" && e.path.length === 0));
      const best = branches.sort((a, b) => a.length - b.length)[0];
      if (best) return best.flatMap((inner) => translate(file, inner, root, path, schema));
      const expected = union.errors.flatMap((errors) =>
        errors.filter((e) => e.code === "invalid_type").map((e) => EXPECTED[(e as { expected: string }).expected] ?? "?"),
      );
      return [at(path, `expected ${[...new Set(expected)].join(" or ")}, got ${typeName(value)}`)];
    }
    case "invalid_key": {
      const key = path.at(-1);
      const inner = issue.issues[0]?.message ?? issue.message;
      return [at(path, `invalid key ${quote(key)}: ${inner}`)];
    }
    case "invalid_format":
      return [at(path, `${issue.message} (got ${quote(value)})`)];
    default:
      return [at(path, issue.message)];
  }
}

export function zodIssuesToConfigErrors(file: string, error: z.ZodError, root: unknown, schema: z.ZodType): ConfigError[] {
  return error.issues.flatMap((issue) => translate(file, issue, root, [], schema));
}
