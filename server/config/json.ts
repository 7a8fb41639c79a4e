// A strict JSON reader for configuration files. JSON.parse says neither where a mistake is
// in a way that is stable across Node versions nor that a key appears twice (it silently
// keeps the last one: two shells with one id would quietly become one). This reader
// reports the line and column of the first syntax error and every duplicate key.

export interface JsonDuplicateKey {
  /** Path of the object holding the key. */
  path: Array<string | number>;
  key: string;
  line: number;
  column: number;
}

export type JsonParseResult =
  { ok: true; value: unknown; duplicates: JsonDuplicateKey[] } | { ok: false; line: number; column: number; message: string };

const MAX_DEPTH = 128;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

class JsonSyntaxError extends Error {
  constructor(
    readonly index: number,
    message: string,
  ) {
    super(message);
  }
}

function describeChar(ch: string | undefined): string {
  if (ch === undefined) return "the end of the file";
  if (ch === "\n") return "a line break";
  return JSON.stringify(ch);
}

class Reader {
  private i = 0;
  readonly duplicates: Array<{ path: Array<string | number>; key: string; index: number }> = [];

  constructor(private readonly text: string) {}

  document(): unknown {
    this.space();
    if (this.i >= this.text.length) throw new JsonSyntaxError(this.i, "the file is empty (expected a JSON object)");
    const value = this.value([], 0);
    this.space();
    if (this.i < this.text.length)
      throw new JsonSyntaxError(this.i, `unexpected ${describeChar(this.text[this.i])} after the end of the JSON value`);
    return value;
  }

  private space(): void {
    for (;;) {
      const ch = this.text[this.i];
      if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") this.i++;
      else if (ch === "/" && (this.text[this.i + 1] === "/" || this.text[this.i + 1] === "*")) {
        throw new JsonSyntaxError(this.i, "comments are not allowed in JSON");
      } else return;
    }
  }

  private value(path: Array<string | number>, depth: number): unknown {
    if (depth > MAX_DEPTH) throw new JsonSyntaxError(this.i, `nested more than ${MAX_DEPTH} levels deep`);
    const ch = this.text[this.i];
    if (ch === "{") return this.object(path, depth);
    if (ch === "[") return this.array(path, depth);
    if (ch === '"') return this.string();
    if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) return this.number();
    for (const [word, value] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return value;
      }
    }
    if (ch === "'") throw new JsonSyntaxError(this.i, "strings must use double quotes");
    throw new JsonSyntaxError(this.i, `expected a value, found ${describeChar(ch)}`);
  }

  private object(path: Array<string | number>, depth: number): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.i++; // {
    this.space();
    if (this.text[this.i] === "}") {
      this.i++;
      return result;
    }
    for (;;) {
      this.space();
      const keyIndex = this.i;
      const ch = this.text[this.i];
      if (ch === "}") throw new JsonSyntaxError(this.i, 'trailing comma before "}"');
      if (ch !== '"') throw new JsonSyntaxError(this.i, `expected a property name in double quotes, found ${describeChar(ch)}`);
      const key = this.string();
      if (seen.has(key)) this.duplicates.push({ path, key, index: keyIndex });
      seen.add(key);
      this.space();
      if (this.text[this.i] !== ":")
        throw new JsonSyntaxError(this.i, `expected ":" after the property name "${key}", found ${describeChar(this.text[this.i])}`);
      this.i++;
      this.space();
      // defineProperty: a key named "__proto__" is data here, never the object's prototype.
      Object.defineProperty(result, key, {
        value: this.value([...path, key], depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.space();
      const next = this.text[this.i];
      if (next === ",") {
        this.i++;
        continue;
      }
      if (next === "}") {
        this.i++;
        return result;
      }
      throw new JsonSyntaxError(this.i, `expected "," or "}" after the value of "${key}", found ${describeChar(next)}`);
    }
  }

  private array(path: Array<string | number>, depth: number): unknown[] {
    const result: unknown[] = [];
    this.i++; // [
    this.space();
    if (this.text[this.i] === "]") {
      this.i++;
      return result;
    }
    for (;;) {
      this.space();
      if (this.text[this.i] === "]") throw new JsonSyntaxError(this.i, 'trailing comma before "]"');
      result.push(this.value([...path, result.length], depth + 1));
      this.space();
      const next = this.text[this.i];
      if (next === ",") {
        this.i++;
        continue;
      }
      if (next === "]") {
        this.i++;
        return result;
      }
      throw new JsonSyntaxError(this.i, `expected "," or "]" after an array item, found ${describeChar(next)}`);
    }
  }

  private string(): string {
    const start = this.i;
    this.i++; // opening quote
    let out = "";
    for (;;) {
      const ch = this.text[this.i];
      if (ch === undefined) throw new JsonSyntaxError(start, "unterminated string");
      if (ch === '"') {
        this.i++;
        return out;
      }
      if (ch === "\\") {
        const esc = this.text[this.i + 1];
        if (esc === "u") {
          const hex = this.text.slice(this.i + 2, this.i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError(this.i, "invalid \\u escape (expected four hex digits)");
          out += String.fromCharCode(parseInt(hex, 16));
          this.i += 6;
          continue;
        }
        const decoded = esc === undefined ? undefined : ESCAPES[esc];
        if (decoded === undefined) throw new JsonSyntaxError(this.i, `invalid escape "\\${esc ?? ""}"`);
        out += decoded;
        this.i += 2;
        continue;
      }
      if (ch < " ")
        throw new JsonSyntaxError(
          this.i,
          ch === "\n" ? "unterminated string (line break inside a string)" : "control character inside a string (escape it)",
        );
      out += ch;
      this.i++;
    }
  }

  private number(): number {
    NUMBER.lastIndex = this.i;
    const match = NUMBER.exec(this.text);
    if (!match) throw new JsonSyntaxError(this.i, `invalid number`);
    this.i += match[0].length;
    return Number(match[0]);
  }
}

function lineColumn(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < index && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: index - lineStart + 1 };
}

/** Parses one JSON document (a leading byte-order mark is ignored). */
export function parseJson(raw: string): JsonParseResult {
  const text = raw.startsWith("\uFEFF") ? raw.slice(1) : raw;
  const reader = new Reader(text);
  try {
    const value = reader.document();
    return {
      ok: true,
      value,
      duplicates: reader.duplicates.map((d) => ({ path: d.path, key: d.key, ...lineColumn(text, d.index) })),
    };
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    return { ok: false, ...lineColumn(text, err.index), message: err.message };
  }
}
