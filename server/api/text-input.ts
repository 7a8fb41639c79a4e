// Text PostgreSQL cannot store, refused at the door with the field named (a 400), before any
// domain code: a NUL byte (text columns and jsonb reject it) or a lone UTF-16 surrogate
// (not valid Unicode, so not valid UTF-8). Numbers beyond what an integer column holds are
// the schemas' business; this is only about strings, anywhere in the input.
const NUL = "\u0000";
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The path of the first string (or key) in `value` that cannot be stored, and why; null when all can. */
export function unstorableText(value: unknown, path: string[] = []): { path: string; problem: string } | null {
  if (typeof value === "string") {
    const where = path.join(".") || "(input)";
    if (value.includes(NUL)) return { path: where, problem: "contains a NUL byte" };
    if (LONE_SURROGATE.test(value)) return { path: where, problem: "contains a lone surrogate (not valid Unicode)" };
    return null;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = unstorableText(item, [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const found = unstorableText(key, [...path, "(key)"]) ?? unstorableText(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
