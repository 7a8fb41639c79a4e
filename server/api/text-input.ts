// Text PostgreSQL cannot store, refused at the door with the field named (a 400), before any
// domain code: a NUL byte (text columns and jsonb reject it) or a lone UTF-16 surrogate
// (not valid Unicode, so not valid UTF-8). Numbers beyond what an integer column holds are
// the schemas' business; this is only about strings, anywhere in the input.
const NUL = "\u0000";
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Deeper than any input of ours goes (a project with its agents is 5 levels): past it, a 400. */
export const MAX_INPUT_DEPTH = 64;

/**
 * The path of the first string (or key) in `value` that cannot be stored, and why; null when
 * all can. Input nested deeper than MAX_INPUT_DEPTH is refused too (walking it, or any schema
 * after, would exhaust the stack: a 500).
 */
export function unstorableText(value: unknown, path: string[] = []): { path: string; problem: string } | null {
  const where = (at: string[]) => at.join(".") || "(input)";
  const pending: Array<{ value: unknown; path: string[] }> = [{ value, path }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value: item, path: at } = next;
    if (typeof item === "string") {
      if (item.includes(NUL)) return { path: where(at), problem: "contains a NUL byte" };
      if (LONE_SURROGATE.test(item)) return { path: where(at), problem: "contains a lone surrogate (not valid Unicode)" };
    } else if (item !== null && typeof item === "object") {
      if (at.length - path.length >= MAX_INPUT_DEPTH)
        return { path: where(at), problem: `is nested deeper than ${MAX_INPUT_DEPTH} levels` };
      // Pushed last to first, so the first problem in document order is found first.
      const entries = Array.isArray(item) ? item.map((v, i) => [String(i), v] as const) : Object.entries(item);
      for (const [key, v] of entries.reverse()) {
        pending.push({ value: v, path: [...at, key] });
        if (!Array.isArray(item)) pending.push({ value: key, path: [...at, "(key)"] });
      }
    }
  }
  return null;
}
