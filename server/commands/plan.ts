// Turns a command as a tester gives it (argv array or one string) into argv, without a
// shell. Strings are split the way a POSIX shell splits words (single quotes, double
// quotes, backslash escapes), and anything a shell would interpret beyond that (pipes,
// redirections, command lists, substitutions, variables, globs, ...) is refused, because
// nothing will interpret it: better a clear refusal than a command that means something else.
import { z } from "zod";

const MAX_COMMAND_CHARS = 8_000;
const MAX_ARGS = 200;

export const ZArgv = z
  .array(
    z
      .string()
      .max(MAX_COMMAND_CHARS)
      .refine((arg) => !arg.includes("\0"), "arguments may not contain NUL bytes"),
  )
  .min(1)
  .max(MAX_ARGS)
  .refine((argv) => argv[0] !== "", "the program name may not be empty");

/** A command as a tester writes it: `["npm","test"]` or `"npx vitest run 'a b.test.ts'"`. */
export const ZCommandSpec = z.union([z.string().min(1).max(MAX_COMMAND_CHARS), ZArgv]);
export type CommandSpec = z.infer<typeof ZCommandSpec>;

export type CommandPlan = { ok: true; argv: string[] } | { ok: false; reason: string };

const OPERATORS: Record<string, string> = {
  "|": "a pipe `|`",
  "&": "a control operator `&`",
  ";": "a command separator `;`",
  "<": "a redirection `<`",
  ">": "a redirection `>`",
  "(": "a subshell `(`",
  ")": "a subshell `)`",
  "\n": "a newline (command separator)",
  "\r": "a carriage return",
};

function refuse(reason: string): CommandPlan {
  return { ok: false, reason: `${reason}; give the command as plain arguments (no shell runs it)` };
}

/** What `$` starts at `rest` (the text after `$`), for the refusal message. */
function describeDollar(rest: string): string {
  if (rest.startsWith("(")) return "command substitution `$(...)`";
  if (rest.startsWith("{")) return "parameter expansion `${...}`";
  if (rest.startsWith("'")) return "ANSI-C quoting `$'...'`";
  const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)?.[0];
  return name ? `variable expansion \`$${name}\`` : "a `$` expansion";
}

interface Word {
  text: string;
  /** For each character of `text`: was it quoted or escaped (so a shell would not expand it)? */
  quoted: boolean[];
}

/** Refusal for shell expansions a word would undergo (globs, braces, tilde, comments). */
function wordExpansionProblem(word: Word, isFirst: boolean): string | null {
  const unquoted = (i: number) => word.quoted[i] === false;
  const chars = [...word.text];
  if (chars[0] === "#" && unquoted(0)) return "a comment `#`";
  if (chars[0] === "~" && unquoted(0)) return `tilde expansion in \`${word.text}\` (quote it, or use a relative path)`;
  for (let i = 0; i < chars.length; i++) {
    if (!unquoted(i)) continue;
    const ch = chars[i];
    if (ch === "*" || ch === "?" || ch === "[") return `a glob \`${word.text}\` (quote it to pass it literally)`;
    if (ch === "{") {
      const close = chars.indexOf("}", i);
      const inner = close > i ? chars.slice(i + 1, close).join("") : "";
      if (close > i && unquoted(close) && (inner.includes(",") || inner.includes(".."))) {
        return `brace expansion \`${word.text}\` (quote it to pass it literally)`;
      }
    }
  }
  if (isFirst && /^[A-Za-z_][A-Za-z0-9_]*=/.test(word.text) && unquoted(0)) {
    return `an environment assignment \`${word.text}\` (extra variables are configured, not typed)`;
  }
  return null;
}

/** Splits a command string into argv without a shell, or says exactly why it will not. */
export function splitCommand(command: string): CommandPlan {
  const words: Word[] = [];
  let current: Word | null = null;
  const push = (ch: string, quoted: boolean) => {
    current ??= { text: "", quoted: [] };
    current.text += ch;
    current.quoted.push(quoted);
  };
  const chars = [...command];
  let i = 0;
  while (i < chars.length) {
    const ch = chars[i] as string;
    if (ch === " " || ch === "\t") {
      if (current) words.push(current);
      current = null;
      i++;
    } else if (ch === "'") {
      const close = chars.indexOf("'", i + 1);
      if (close === -1) return refuse("an unterminated single quote");
      current ??= { text: "", quoted: [] };
      for (const quotedChar of chars.slice(i + 1, close)) push(quotedChar, true);
      i = close + 1;
    } else if (ch === '"') {
      current ??= { text: "", quoted: [] };
      i++;
      for (;;) {
        const inner = chars[i];
        if (inner === undefined) return refuse("an unterminated double quote");
        if (inner === '"') break;
        if (inner === "`") return refuse("command substitution with backticks");
        if (inner === "$") return refuse(describeDollar(chars.slice(i + 1).join("")));
        if (inner === "\\") {
          const next = chars[i + 1];
          // Inside double quotes a backslash only escapes these; elsewhere it stays.
          if (next !== undefined && ['"', "\\", "$", "`"].includes(next)) {
            push(next, true);
            i += 2;
            continue;
          }
          if (next === "\n") return refuse("a line continuation");
        }
        push(inner, true);
        i++;
      }
      i++;
    } else if (ch === "\\") {
      const next = chars[i + 1];
      if (next === undefined) return refuse("a trailing backslash");
      if (next === "\n") return refuse("a line continuation");
      push(next, true);
      i += 2;
    } else if (ch === "`") {
      return refuse("command substitution with backticks");
    } else if (ch === "$") {
      return refuse(describeDollar(chars.slice(i + 1).join("")));
    } else if (Object.hasOwn(OPERATORS, ch)) {
      const pair = ch + (chars[i + 1] ?? "");
      const named = pair === "&&" ? "a command list `&&`" : pair === "||" ? "a command list `||`" : OPERATORS[ch];
      return refuse(`shell syntax: ${named}`);
    } else {
      push(ch, false);
      i++;
    }
  }
  if (current) words.push(current);
  if (words.length === 0) return { ok: false, reason: "the command is empty" };
  for (const [index, word] of words.entries()) {
    const problem = wordExpansionProblem(word, index === 0);
    if (problem) return refuse(`shell syntax: ${problem}`);
  }
  const argv = words.map((word) => word.text);
  const parsed = ZArgv.safeParse(argv);
  if (!parsed.success) return { ok: false, reason: parsed.error.issues.map((issue) => issue.message).join("; ") };
  return { ok: true, argv: parsed.data };
}

/** A command from a tester (argv or string) as argv, or the reason it cannot be one. */
export function planCommand(input: CommandSpec): CommandPlan {
  if (typeof input === "string") {
    if (input.length > MAX_COMMAND_CHARS) return { ok: false, reason: `the command is longer than ${MAX_COMMAND_CHARS} characters` };
    return splitCommand(input);
  }
  const parsed = ZArgv.safeParse(input);
  if (!parsed.success) return { ok: false, reason: `invalid argv: ${parsed.error.issues.map((issue) => issue.message).join("; ")}` };
  return { ok: true, argv: [...parsed.data] };
}
