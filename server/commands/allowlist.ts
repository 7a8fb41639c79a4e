// A project's command allowlist (req W8): argv patterns, never shell strings.
// A rule is a list of tokens matched position by position against argv:
//   - a plain token matches literally;
//   - `*` on its own matches exactly one argument, whatever it holds;
//   - `**` on its own, last in the rule, matches the remaining arguments (zero or more);
//   - inside a token, `{a,b}` lists alternatives, `?` is one character, `*` is any run
//     of characters except `/` and `**` any run including `/`.
// Flags are matched strictly: a wildcard matches an option (an argument starting with `-`)
// only when the token itself starts with `-` (`--reporter={dot,tap}`). So `node --test **`
// runs test files, but not `node --test --import=data:…`: an allowed command lists the flags
// it may take.
import { z } from "zod";

const ONE_ARG = "*";
const REST_ARGS = "**";

/** Why a single pattern token is malformed, or null when it is fine. */
function tokenProblem(token: string): string | null {
  let depth = 0;
  for (const ch of token) {
    if (ch === "{") {
      if (depth > 0) return "nested `{` alternatives are not supported";
      depth++;
    } else if (ch === "}") {
      if (depth === 0) return "`}` without a matching `{`";
      depth--;
    }
  }
  if (depth !== 0) return "`{` without a matching `}`";
  return null;
}

function hasWildcard(token: string): boolean {
  return /[*?{]/.test(token);
}

export const ZAllowRule = z
  .array(z.string().min(1).max(500))
  .min(1)
  .max(100)
  .superRefine((rule, ctx) => {
    rule.forEach((token, index) => {
      const problem = tokenProblem(token);
      if (problem) ctx.addIssue({ code: "custom", path: [index], message: problem });
      if (token === REST_ARGS && index !== rule.length - 1) {
        ctx.addIssue({ code: "custom", path: [index], message: "`**` may only be the last token of a rule" });
      }
    });
    const program = rule[0];
    if (program !== undefined && /[*?]/.test(program)) {
      ctx.addIssue({ code: "custom", path: [0], message: "the program (first token) must be literal or `{a,b}` alternatives" });
    }
  });
export type AllowRule = z.infer<typeof ZAllowRule>;

export const ZAllowlist = z.array(ZAllowRule).max(500);
export type Allowlist = z.infer<typeof ZAllowlist>;

function escapeRegExp(text: string): string {
  return text.replace(/[.+^$()|[\]\\/]/g, "\\$&");
}

const tokenRegExpCache = new Map<string, RegExp>();

/** Compiles one in-token glob (assumed valid per ZAllowRule) to an anchored RegExp. */
function tokenRegExp(token: string): RegExp {
  const cached = tokenRegExpCache.get(token);
  if (cached) return cached;
  let source = "";
  for (let i = 0; i < token.length; i++) {
    const ch = token.charAt(i);
    if (ch === "*") {
      if (token.charAt(i + 1) === "*") {
        source += "[^]*";
        i++;
      } else {
        source += "[^/]*";
      }
    } else if (ch === "?") {
      source += "[^/]";
    } else if (ch === "{") {
      const end = token.indexOf("}", i);
      const alternatives = token
        .slice(i + 1, end)
        .split(",")
        .map(escapeRegExp);
      source += `(?:${alternatives.join("|")})`;
      i = end;
    } else {
      source += escapeRegExp(ch);
    }
  }
  const compiled = new RegExp(`^${source}$`, "u");
  tokenRegExpCache.set(token, compiled);
  return compiled;
}

export function matchToken(token: string, arg: string): boolean {
  if (token === ONE_ARG) return true;
  if (!hasWildcard(token)) return token === arg;
  return tokenRegExp(token).test(arg);
}

/** An option: what a wildcard never matches unless its token is itself written as a flag. */
export function isFlag(arg: string): boolean {
  return arg.startsWith("-") && arg !== "-";
}

/**
 * Whether `rule` allows `argv`. With `flags: "loose"` a wildcard also matches flags (only to
 * explain a refusal: "this rule would allow it but for the flag").
 */
export function matchRule(rule: AllowRule, argv: readonly string[], flags: "strict" | "loose" = "strict"): boolean {
  const wildcardTakes = (token: string, arg: string) => flags === "loose" || !isFlag(arg) || token.startsWith("-");
  for (let i = 0; i < rule.length; i++) {
    const token = rule[i] as string;
    if (token === REST_ARGS && i === rule.length - 1) return argv.slice(i).every((arg) => wildcardTakes(token, arg));
    const arg = argv[i];
    if (arg === undefined || !matchToken(token, arg)) return false;
    if (hasWildcard(token) && !wildcardTakes(token, arg)) return false;
  }
  return argv.length === rule.length;
}

/** The first rule that allows argv, or null. */
export function findMatchingRule(allowlist: readonly AllowRule[], argv: readonly string[]): AllowRule | null {
  return allowlist.find((rule) => matchRule(rule, argv)) ?? null;
}

/** A rule that would allow argv if its wildcards took flags, and the first flag it does not list. */
export function flagRefusal(allowlist: readonly AllowRule[], argv: readonly string[]): { rule: AllowRule; flag: string } | null {
  const rule = allowlist.find((r) => matchRule(r, argv, "loose"));
  if (!rule) return null;
  const last = rule.length - 1;
  const tokenAt = (i: number) => (rule[last] === REST_ARGS && i >= last ? REST_ARGS : (rule[i] ?? ""));
  const flag = argv.find((arg, i) => isFlag(arg) && hasWildcard(tokenAt(i)) && !tokenAt(i).startsWith("-"));
  return flag ? { rule, flag } : null;
}

/** A rule as a person reads it: `npx vitest run **`. */
export function formatRule(rule: AllowRule): string {
  return rule.map((token) => (token === "" || /[\s'"]/.test(token) ? JSON.stringify(token) : token)).join(" ");
}

/** How many leading tokens of the rule argv satisfies; the rule's program must match. */
function sharedPrefix(rule: AllowRule, argv: readonly string[]): number {
  let shared = 0;
  for (let i = 0; i < rule.length; i++) {
    const token = rule[i] as string;
    const arg = argv[i];
    if (token === REST_ARGS || arg === undefined || !matchToken(token, arg)) break;
    shared++;
  }
  return shared;
}

/** Rules for the same program as argv, best first: what the caller probably meant. */
export function closestRules(allowlist: readonly AllowRule[], argv: readonly string[], limit = 3): AllowRule[] {
  return allowlist
    .map((rule, index) => ({ rule, index, shared: sharedPrefix(rule, argv) }))
    .filter((candidate) => candidate.shared > 0)
    .sort((a, b) => b.shared - a.shared || a.index - b.index)
    .slice(0, limit)
    .map((candidate) => candidate.rule);
}
