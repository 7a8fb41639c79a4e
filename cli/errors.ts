// The CLI's exit codes and how a failure is told to a person (or, with --json, to a script):
// the server's code and message, each input field's problem, and what to do about it.
import { describeError, type ClientErrorInfo } from "../lib/client";

export const EXIT = {
  OK: 0,
  /** The command failed (the server refused, the server is unreachable, a bad file, ...). */
  FAILED: 1,
  /** The command line itself is wrong (unknown option, missing argument). */
  USAGE: 2,
  /** A watched session ended without success (failed, cancelled, review_schema_invalid, ...). */
  SESSION_UNSUCCESSFUL: 3,
} as const;

/** A failure the CLI found itself (not logged in, bad file, ...). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly options: { code?: string; hint?: string; exitCode?: number } = {},
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** How input fields are spelled on the command line. */
const FIELD_FLAGS: Record<string, string> = {
  projectId: "--project",
  sessionId: "<session id>",
  prompt: "<prompt>",
  mode: "--mode",
  workflow: "--workflow",
  title: "--title",
  text: "<text>",
  reason: "--reason",
  name: "--name",
  agent: "<agent>",
  state: "--state",
  limit: "--limit",
  cursor: "--cursor",
  createdBy: "--created-by",
  files: "<dir>",
  brains: "<brain>",
};

const HINTS: Record<string, string> = {
  UNAUTHORIZED:
    "The server did not accept your credentials: the token is unknown or revoked, or its user is disabled. Sign in again with `catcafe login`.",
  FORBIDDEN:
    "Your role does not allow this (viewers read; operators start, confirm, follow up, cancel and rerun; admins configure). Ask an admin for the role you need.",
  CONFLICT:
    "Someone else changed this session first (for example another operator confirmed it a moment before you). Look at where it is now with `catcafe session show <id>` and retry only if it still makes sense.",
  PRECONDITION_FAILED:
    "Something this needs is not in place (the message says what): for example the session already finished or is not waiting for a confirm (`catcafe session show <id>`), or the project has no agent for a role.",
  NOT_FOUND: "Check the id: `catcafe sessions list` and `catcafe projects list` show what exists.",
  UNREACHABLE: "Is the server running, and is the URL right? Set it with `catcafe login --url <url>` or CATCAFE_URL.",
  TOO_MANY_REQUESTS: "Slow down and retry in a moment.",
  SIGN_IN_REFUSED:
    "Check the email and password (an admin can reset them). If you sign in with GitHub or OIDC, create a token in the web app and use `catcafe login --token-stdin`.",
  NOT_SIGNED_IN: "Run `catcafe login --url <url>`, or set CATCAFE_TOKEN.",
};

export interface ErrorReport {
  code: string;
  message: string;
  httpStatus: number | null;
  fieldErrors: Record<string, string[]>;
  formErrors: string[];
  hint: string | null;
}

export function reportOf(err: unknown): ErrorReport {
  if (err instanceof CliError) {
    return {
      code: err.options.code ?? "CLI_ERROR",
      message: err.message,
      httpStatus: null,
      fieldErrors: {},
      formErrors: [],
      hint: err.options.hint ?? HINTS[err.options.code ?? ""] ?? null,
    };
  }
  const info: ClientErrorInfo = describeError(err);
  return { ...info, hint: HINTS[info.code] ?? null };
}

export function exitCodeOf(err: unknown): number {
  if (!(err instanceof CliError)) return EXIT.FAILED;
  return err.options.exitCode ?? (err.options.code === "USAGE" ? EXIT.USAGE : EXIT.FAILED);
}

/** The report as lines for a terminal. */
export function formatReport(report: ErrorReport): string[] {
  const plain = report.code === "CLI_ERROR" || report.code === "UNKNOWN";
  const lines = [
    report.code === "BAD_REQUEST" ? `invalid input: ${report.message}` : plain ? report.message : `${report.code}: ${report.message}`,
  ];
  for (const problem of report.formErrors) lines.push(`  ${problem}`);
  for (const [field, problems] of Object.entries(report.fieldErrors)) {
    const flag = FIELD_FLAGS[field];
    for (const problem of problems) lines.push(`  ${field}${flag ? ` (${flag})` : ""}: ${problem}`);
  }
  if (report.hint) lines.push(`  ${report.hint}`);
  return lines;
}
