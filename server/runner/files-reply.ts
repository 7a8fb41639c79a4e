// How an agent without hands (an HTTP brain: Agent.fileWrites "reply") acts in a step that
// writes files — a Forge stage's draft, a coder's build: it answers with the files as named
// entries of one strict JSON reply, and the runner writes them into the worktree before the
// step's own rules (forge-steps.ts: refused writes, a person's edits, artifacts, redaction)
// and its commit, as if the agent had written them. The format, what a brain is told of it,
// and its reading live here alone (docs/forge.md "Who can act in a stage").
import fs from "node:fs/promises";
import { z } from "zod";
import type { StepInput } from "../events/step-contract";
import { pathAllowed } from "../forge/loop";
import { runGit } from "../workspaces/git";
import { parseStrictJson, type Parsed } from "../workflow/outputs";
import { StepExecutionError } from "./executors";
import { insideWorkspace, writeInside } from "./workspace-files";

/** At most this many files in one reply. */
export const MAX_REPLY_FILES = 200;
/** One file's content, in UTF-8 bytes (an artifact larger than this is not read either: forge-steps.ts). */
export const MAX_REPLY_FILE_BYTES = 1024 * 1024;
const MAX_PATH_CHARS = 1024;
const MAX_SUMMARY_CHARS = 4000;

/** Why `p` cannot name a file of the repository, or null when it can (the runner still checks for links out when it writes). */
function pathProblem(p: string): string | null {
  if (p === "") return null; // said by the schema's min
  // Not quoted: a NUL byte cannot be stored in the message that names the problem.
  if (p.includes("\0")) return "must not contain a NUL byte";
  const quoted = JSON.stringify(p);
  if (p.includes("\\")) return `${quoted} must use "/" between its parts, not "\\"`;
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return `${quoted} must be relative to the repository root, not absolute`;
  const parts = p.split("/");
  if (parts.some((part) => part === "")) return `${quoted} must not start or end with "/" or contain "//"`;
  if (parts.some((part) => part === "." || part === "..")) return `${quoted} must not contain "." or ".." parts`;
  if (parts[0] === ".git") return `${quoted} must not be inside .git`;
  return null;
}

const ZReplyPath = z
  .string()
  .min(1, "must not be empty")
  .max(MAX_PATH_CHARS, `must be at most ${MAX_PATH_CHARS} characters`)
  .superRefine((p, ctx) => {
    const problem = pathProblem(p);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const ZReplyFile = z
  .object({
    path: ZReplyPath,
    content: z
      .string()
      .refine((c) => Buffer.byteLength(c, "utf8") <= MAX_REPLY_FILE_BYTES, `must be at most ${MAX_REPLY_FILE_BYTES} bytes`),
  })
  .strict();

/** A brain's reply in a step that writes files: each file's whole new text by its path, each path once. */
export const ZFilesReply = z
  .object({
    files: z
      .array(ZReplyFile)
      .max(MAX_REPLY_FILES, `at most ${MAX_REPLY_FILES} files in one reply`)
      .superRefine((files, ctx) => {
        const first = new Map<string, number>();
        files.forEach((f, i) => {
          const seen = first.get(f.path);
          if (seen === undefined) first.set(f.path, i);
          else
            ctx.addIssue({
              code: "custom",
              path: [i, "path"],
              message: `${JSON.stringify(f.path)} is named again (first at files.${seen})`,
            });
        });
      }),
    summary: z.string().max(MAX_SUMMARY_CHARS, `must be at most ${MAX_SUMMARY_CHARS} characters`).optional(),
  })
  .strict();
export type FilesReply = z.infer<typeof ZFilesReply>;

/** A reply read as the format says: strict JSON (one ```json fence tolerated), each problem named by its field. */
export function parseFilesReply(text: string): Parsed<FilesReply> {
  return parseStrictJson(text, ZFilesReply);
}

/** Whether a step writes files: a build, an execution, a Forge stage's draft (the runner commits what they change). */
export function writesFiles(input: Pick<StepInput, "phase">): boolean {
  return input.phase === "build" || input.phase === "execute" || input.phase === "draft";
}

/** The files a step's agent is to write and the globs it may write, as the step's input says (null: not limited). */
function scopeOf(input: Pick<StepInput, "forge" | "agent">): { write: string[]; may: string[] | null } {
  if (input.forge) return { write: input.forge.collect, may: input.forge.writes };
  return { write: [], may: input.agent?.manifest?.allowedFiles ?? null };
}

/** What a brain is told in a step that writes files: the format, and the paths it is to and may write. */
export function filesReplyInstruction(input: Pick<StepInput, "forge" | "agent">): string {
  const { write, may } = scopeOf(input);
  const example = write[0] ?? "src/example.js";
  return [
    "\n\nHow to write files: you cannot write them yourself. Reply with ONE JSON document and nothing else (one ```json fence around it is allowed):",
    JSON.stringify({ files: [{ path: example, content: "the file's whole new text" }], summary: "one line on what you wrote" }),
    '- "path": relative to the repository root, parts separated by "/", no "." or ".." parts, each path once.',
    '- "content": the file\'s whole text; it replaces the file. A file you leave out stays as it is.',
    ...(write.length ? [`- Write: ${write.join(", ")}.`] : []),
    may
      ? `- You may write only paths matching: ${may.join(" ")} (gitignore-style, the last matching pattern wins); anything else is discarded.`
      : "",
  ]
    .filter(Boolean)
    .join("\n");
}

/** How much of the worktree a brain is shown: file names, one file's text, all files' text. */
const VIEW_MAX_NAMES = 400;
const VIEW_MAX_FILE_CHARS = 20_000;
const VIEW_MAX_CHARS = 60_000;

/**
 * What a brain sees of the worktree before it writes (a CLI reads the files itself): the
 * tracked files' names, then the text of the files it is most likely to change — those the
 * session changed since its base commit, then those it may write (all, when it is not
 * limited), smallest first — within a budget. Only regular files inside the worktree are
 * read (a link is never followed: it could lead to the runner's own files), and no binary file.
 */
export async function worktreeView(workspace: string, input: Pick<StepInput, "forge" | "agent">, baseCommit: string): Promise<string> {
  const tracked = (await runGit(workspace, ["ls-files", "-z"])).stdout.split("\0").filter(Boolean);
  const changed = (await runGit(workspace, ["diff", "--name-only", "-z", baseCommit, "HEAD"], { allowFailure: true })).stdout
    .split("\0")
    .filter(Boolean);
  const { may } = scopeOf(input);
  const sized: Array<{ path: string; target: string; size: number; changed: boolean }> = [];
  for (const p of new Set([...changed, ...tracked])) {
    if (may && !pathAllowed(p, may)) continue;
    const target = readableInside(workspace, p);
    const stat = target ? await fs.lstat(target).catch(() => null) : null;
    if (target && stat?.isFile()) sized.push({ path: p, target, size: stat.size, changed: changed.includes(p) });
  }
  sized.sort((a, b) => Number(b.changed) - Number(a.changed) || a.size - b.size || (a.path < b.path ? -1 : 1));
  const shown: string[] = [];
  let budget = VIEW_MAX_CHARS;
  for (const file of sized) {
    if (file.size > Math.min(budget, VIEW_MAX_FILE_CHARS) * 4) continue;
    const content = await fs.readFile(file.target);
    if (content.subarray(0, 8192).includes(0)) continue;
    const text = content.toString("utf8");
    if (text.length > Math.min(budget, VIEW_MAX_FILE_CHARS)) continue;
    shown.push(`--- ${file.path} ---\n${text}`);
    budget -= text.length;
  }
  const names =
    tracked.length > VIEW_MAX_NAMES ? [...tracked.slice(0, VIEW_MAX_NAMES), `… and ${tracked.length - VIEW_MAX_NAMES} more`] : tracked;
  return [
    `\n\nThe repository's files (${tracked.length}):\n${names.join("\n")}`,
    shown.length ? `\n\nTheir text as it is now (${shown.length} of them):\n${shown.join("\n\n")}` : "",
  ].join("");
}

/** The file's path when it stays inside the worktree, else null (a link out: its name is shown, never its target). */
function readableInside(workspace: string, p: string): string | null {
  try {
    return insideWorkspace(workspace, p);
  } catch {
    return null;
  }
}

/**
 * Writes a brain's files reply into the worktree; its summary (for the commit message). A reply
 * that breaks the format, or a file that cannot be written where it says (a link out, a
 * directory in the way), is invalid output: retried within the step's attempts, then the
 * step fails with the problem named.
 */
export async function writeFilesReply(workspace: string, agentId: string, text: string): Promise<{ summary: string | null }> {
  const parsed = parseFilesReply(text);
  const invalid = (problems: string[]) =>
    new StepExecutionError("schema_invalid", `the files reply of ${agentId} is invalid: ${problems.join("; ")}`.slice(0, 2000), true);
  if (!parsed.ok) throw invalid(parsed.errors);
  for (const [i, file] of parsed.value.files.entries()) {
    try {
      await writeInside(workspace, file.path, file.content);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        code === "EISDIR" ? "a directory is there" : code === "ENOTDIR" ? "a file is where a directory must be" : (err as Error).message;
      throw invalid([`files.${i}.path: cannot write ${JSON.stringify(file.path)}: ${why}`]);
    }
  }
  return { summary: parsed.value.summary?.trim() || null };
}
