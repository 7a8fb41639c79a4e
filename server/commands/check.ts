// Decides whether a command may run (req W8, F9): valid argv, not a server or watcher,
// no path outside the workspace, and matched by a rule of the project's allowlist. Every
// refusal carries a code and a reason specific enough to fix the command.
import { closestRules, findMatchingRule, flagRefusal, formatRule, ZAllowlist, type Allowlist, type AllowRule } from "./allowlist";
import { longRunningReason } from "./long-running";
import { pathEscapeReason } from "./paths";
import { ZArgv } from "./plan";

export const REFUSAL_CODES = [
  "invalid_command",
  "invalid_allowlist",
  "long_running",
  "path_escape",
  "flag_not_allowed",
  "not_allowlisted",
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

export type CommandCheck = { allowed: true; rule: AllowRule } | { allowed: false; code: RefusalCode; reason: string };

export interface CheckOptions {
  /** The directory the command runs in; absolute arguments inside it are allowed. */
  workspace?: string;
}

/** argv as a person would type it, shortened for messages. */
export function formatArgv(argv: readonly string[], maxChars = 200): string {
  const text = argv.map((arg) => (arg === "" || /[\s'"\\$`]/.test(arg) ? JSON.stringify(arg) : arg)).join(" ");
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}

function notAllowlistedReason(argv: readonly string[], allowlist: readonly AllowRule[]): string {
  const command = `\`${formatArgv(argv)}\` is not on the project's allowlist`;
  if (allowlist.length === 0) return `${command} (the allowlist is empty)`;
  const closest = closestRules(allowlist, argv);
  if (closest.length > 0) return `${command}; closest rules: ${closest.map((rule) => `\`${formatRule(rule)}\``).join(", ")}`;
  const programs = [...new Set(allowlist.map((rule) => rule[0]))].join(", ");
  return `${command}; no rule starts with \`${argv[0]}\` (allowed programs: ${programs})`;
}

export function checkCommand(argv: readonly string[], allowlist: Allowlist, options: CheckOptions = {}): CommandCheck {
  const parsedArgv = ZArgv.safeParse(argv);
  if (!parsedArgv.success) {
    return {
      allowed: false,
      code: "invalid_command",
      reason: `invalid argv: ${parsedArgv.error.issues.map((issue) => issue.message).join("; ")}`,
    };
  }
  // Re-validated: an allowlist may come straight from a project file.
  const parsedAllowlist = ZAllowlist.safeParse(allowlist);
  if (!parsedAllowlist.success) {
    const issues = parsedAllowlist.error.issues.map((issue) => `[${issue.path.join("][")}]: ${issue.message}`).join("; ");
    return { allowed: false, code: "invalid_allowlist", reason: `the project's allowlist is invalid: ${issues}` };
  }
  const longRunning = longRunningReason(argv);
  if (longRunning) {
    return {
      allowed: false,
      code: "long_running",
      reason: `${longRunning}; long-running servers and watchers are refused even when allowlisted`,
    };
  }
  const escape = pathEscapeReason(argv, options.workspace);
  if (escape) return { allowed: false, code: "path_escape", reason: escape };
  const rule = findMatchingRule(parsedAllowlist.data, argv);
  if (!rule) {
    const flag = flagRefusal(parsedAllowlist.data, argv);
    if (flag) {
      const reason = `flag \`${formatArgv([flag.flag])}\` is not allowed: rule \`${formatRule(flag.rule)}\` does not list it, and a wildcard never matches a flag (an allowed command names the flags it may take)`;
      return { allowed: false, code: "flag_not_allowed", reason };
    }
    return { allowed: false, code: "not_allowlisted", reason: notAllowlistedReason(argv, parsedAllowlist.data) };
  }
  return { allowed: true, rule };
}
