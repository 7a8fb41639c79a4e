// What a runner does around a staged (Forge) step, so that the stage's rules hold whatever
// the agent does: before it runs, the artifacts as recorded are written (a person's edits
// among them) and feedback_history.json; after, every change outside the stage's globs is
// undone (refused, and reported), a person's edits are kept through the redraft by a
// three-way merge (git merge-file, the person's side winning a conflict, the agent's
// version held back), and the stage's artifacts are read, stored and hashed (the server's
// secrets redacted first, as in every agent output).
import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Db } from "../db/pool";
import { getBlob, putBlob } from "../events/blobs";
import type { AgentStepOutput, ForgeStepInput } from "../events/step-contract";
import { ARTIFACT_PATHS, FORGE_DIR, type Patch } from "../forge/artifacts";
import { patchSection } from "../forge/patch";
import { pathAllowed } from "../forge/loop";
import { recordableOutput } from "../process/env";
import { runGit } from "../workspaces/git";
import { insideWorkspace, writeInside } from "./workspace-files";

type ForgeOutput = NonNullable<AgentStepOutput["forge"]>;

/** An artifact larger than this is not read (a warning), so a runaway file cannot fill an event's blob. */
const MAX_ARTIFACT_BYTES = 1024 * 1024;
const MAX_ATTACHED_CHARS = 60_000;

/**
 * Writes the recorded artifacts and the feedback history; returns what to add to the prompt:
 * the artifacts written before the thread's window (`attached`, before the thread) and, by
 * index in the thread, those to show right after a message (`afterMessage`). An agent that is
 * not shown the thread (`inThread` false) gets them all before it.
 */
export async function prepareForgeStep(
  pool: Db,
  workspace: string,
  forge: ForgeStepInput,
  { inThread }: { inThread: boolean } = { inThread: true },
): Promise<{ attached: string; afterMessage: Map<number, string> }> {
  for (const { path: p, blob } of forge.materialize) await writeInside(workspace, p, (await getBlob(pool, blob.blob)).content);
  await writeInside(workspace, ARTIFACT_PATHS.feedbackHistory, forge.feedbackHistory);
  const parts: string[] = [];
  const afterMessage = new Map<number, string>();
  let budget = MAX_ATTACHED_CHARS;
  for (const { path: p, blob, afterMessage: index } of forge.attach) {
    const text = (await getBlob(pool, blob.blob)).content.toString("utf8");
    const shown = text.length > budget ? `${text.slice(0, Math.max(0, budget))}\n[truncated]` : text;
    budget -= shown.length;
    const part = `--- ${p} ---\n${shown}`;
    if (index === undefined || !inThread) parts.push(part);
    else afterMessage.set(index, afterMessage.has(index) ? `${afterMessage.get(index)}\n\n${part}` : part);
  }
  return {
    attached: parts.length ? `\n\nThe pipeline's artifacts so far (also in the workspace):\n${parts.join("\n\n")}` : "",
    afterMessage,
  };
}

function goneUnderAFile(err: NodeJS.ErrnoException): void {
  if (err.code !== "ENOTDIR") throw err;
}

/** Paths changed in the worktree against HEAD (tracked and untracked), renames as delete + add. */
async function changedPaths(workspace: string): Promise<Array<{ path: string; tracked: boolean }>> {
  const { stdout } = await runGit(workspace, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]);
  return stdout
    .split("\0")
    .filter((entry) => entry.length > 3)
    .map((entry) => ({ path: entry.slice(3), tracked: !entry.startsWith("??") }));
}

/**
 * Undoes the agent's writes outside the stage's globs (the files the runner itself wrote
 * before the agent are put back as they were); returns the refused paths.
 */
async function refuseOutside(workspace: string, forge: ForgeStepInput, written: Map<string, Buffer>): Promise<string[]> {
  const refused: string[] = [];
  for (const change of await changedPaths(workspace)) {
    const mine = written.get(change.path);
    if (mine) {
      const now = await fs.readFile(path.join(workspace, change.path)).catch(() => null);
      if (now && now.equals(mine)) continue;
      if (pathAllowed(change.path, forge.writes)) continue;
      refused.push(change.path);
      await fs.rm(path.join(workspace, change.path), { force: true, recursive: true });
      await writeInside(workspace, change.path, mine);
      continue;
    }
    if (pathAllowed(change.path, forge.writes)) continue;
    refused.push(change.path);
    if (change.tracked) await runGit(workspace, ["checkout", "--quiet", "HEAD", "--", change.path]);
    // A file under a directory the agent put in place of one of the runner's files is gone
    // already: that file was put back above (ENOTDIR).
    else await fs.rm(path.join(workspace, change.path), { force: true, recursive: true }).catch(goneUnderAFile);
  }
  return refused;
}

/**
 * Keeps each of a person's edits through the agent's redraft: a three-way merge of the
 * draft with the edit (base: what the person edited). Where both changed the same lines the
 * person's text is kept and the agent's draft is returned as held back.
 */
async function keepPersonEdits(pool: Db, workspace: string, forge: ForgeStepInput): Promise<ForgeOutput["held"]> {
  const held: ForgeOutput["held"] = [];
  if (!forge.protect.length) return held;
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "catcafe-merge-"));
  try {
    for (const [i, edit] of forge.protect.entries()) {
      const target = insideWorkspace(workspace, edit.path);
      const draft = await fs.readFile(target).catch(() => Buffer.alloc(0));
      const edited = (await getBlob(pool, edit.edited.blob)).content;
      if (draft.equals(edited)) continue;
      const files = ["person", "base", "agent"].map((n) => path.join(scratch, `${i}-${n}`));
      await fs.writeFile(files[0]!, edited);
      await fs.writeFile(files[1]!, edit.base ? (await getBlob(pool, edit.base.blob)).content : Buffer.alloc(0));
      await fs.writeFile(files[2]!, draft);
      const merged = await runGit(workspace, ["merge-file", "-p", "-L", "person", "-L", "base", "-L", "agent", ...files], {
        allowFailure: true,
      });
      if (merged.exitCode < 0 || merged.exitCode > 127) throw new Error(`git merge-file failed for ${edit.path}: ${merged.stderr}`);
      if (merged.exitCode === 0) {
        await fs.writeFile(target, merged.stdout);
        continue;
      }
      const personWins = await runGit(workspace, ["merge-file", "-p", "--ours", ...files], { allowFailure: true });
      await fs.writeFile(target, personWins.stdout);
      const blob = await putBlob(pool, draft, "text/plain; charset=utf-8");
      held.push({ path: edit.path, hash: sha256(draft), blob, conflicts: merged.exitCode });
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  return held;
}

function sha256(content: Buffer): string {
  return crypto.createHash("sha256").update(content).digest("hex");
}

/**
 * A stage file as the agent left it: null when absent; an error when its path leads out of
 * the worktree (a symbolic link), when it is no regular file, or when it is too large.
 */
async function readStageFile(workspace: string, p: string): Promise<Buffer | null> {
  const target = insideWorkspace(workspace, p);
  const stat = await fs.lstat(target).catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? null : Promise.reject(err)));
  if (!stat) return null;
  if (!stat.isFile()) throw new Error(`${p} is not a regular file`);
  if (stat.size > MAX_ARTIFACT_BYTES) throw new Error(`${p} is ${stat.size} bytes, over the ${MAX_ARTIFACT_BYTES}-byte limit`);
  return fs.readFile(target);
}

/** Reads the stage's artifacts after the agent: each stored as a blob with its hash; what cannot be read is a warning. */
async function collectArtifacts(pool: Db, workspace: string, forge: ForgeStepInput, warnings: string[]): Promise<ForgeOutput["artifacts"]> {
  const artifacts: ForgeOutput["artifacts"] = [];
  for (const p of forge.collect) {
    let content: Buffer;
    try {
      const read = await readStageFile(workspace, p);
      if (!read) continue;
      content = read;
      // Whatever the agent could read, the server's secrets never reach the record: a value
      // found is replaced in the file too, so the worktree, the commit and the blob agree.
      const { text, redactions } = recordableOutput(content.toString("utf8"));
      if (redactions) {
        content = Buffer.from(text, "utf8");
        await fs.writeFile(insideWorkspace(workspace, p), content);
        warnings.push(`${p}: ${redactions} value(s) of the server's secrets replaced before it was recorded`);
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      warnings.push(code === "EACCES" || code === "EPERM" ? `could not read ${p}: permission denied (skipped)` : (err as Error).message);
      continue;
    }
    artifacts.push({ path: p, hash: sha256(content), blob: await putBlob(pool, content, mediaType(p)), size: content.length });
  }
  return artifacts;
}

function mediaType(p: string): string {
  return p.endsWith(".json") ? "application/json" : "text/markdown; charset=utf-8";
}

/** A file's status letter in `git diff --name-status`. */
const STATUS: Record<string, string> = { A: "added", M: "modified", D: "deleted", T: "modified" };

/**
 * A modify session's patch, from git: the code's diff from the base session's last commit to
 * HEAD (the code Check passed; the artifacts under .forge/ are no code), with the plan tasks
 * kept as the engine counted them, written as patch.json and appended to the agent's report
 * as its "Patch" section.
 */
async function writePatch(workspace: string, input: NonNullable<ForgeStepInput["patch"]>): Promise<void> {
  const head = (await runGit(workspace, ["rev-parse", "HEAD"])).stdout.trim();
  const range = [input.baseCommit, head, "--", ".", `:(exclude)${FORGE_DIR}`];
  const numstat = (await runGit(workspace, ["diff", "--no-renames", "--numstat", "-z", ...range])).stdout.split("\0").filter(Boolean);
  const names = (await runGit(workspace, ["diff", "--no-renames", "--name-status", "-z", ...range])).stdout.split("\0").filter(Boolean);
  const status = new Map<string, string>();
  for (let i = 0; i + 1 < names.length; i += 2) status.set(names[i + 1]!, STATUS[names[i]!] ?? names[i]!);
  const files = numstat.map((entry) => {
    const [added, removed, ...rest] = entry.split("\t");
    const p = rest.join("\t");
    // Binary files count "-" lines.
    return { path: p, status: status.get(p) ?? "modified", added: Number(added) || 0, removed: Number(removed) || 0 };
  });
  const patch: Patch = {
    baseCommit: input.baseCommit,
    headCommit: head,
    files,
    added: files.reduce((n, f) => n + f.added, 0),
    removed: files.reduce((n, f) => n + f.removed, 0),
    tasks: input.tasks,
  };
  await writeInside(workspace, ARTIFACT_PATHS.patch, `${JSON.stringify(patch, null, 2)}\n`);
  // Read as every artifact is: a link out of the worktree, or no regular file, fails the step.
  const report = (await readStageFile(workspace, ARTIFACT_PATHS.changeReport))?.toString("utf8") ?? "";
  await writeInside(workspace, ARTIFACT_PATHS.changeReport, `${report.trimEnd()}${report.trim() ? "\n\n" : ""}${patchSection(patch)}`);
}

/** After the agent ran, before the commit: refuse, merge, collect. */
export async function finishForgeStep(pool: Db, workspace: string, forge: ForgeStepInput): Promise<ForgeOutput> {
  const written = new Map<string, Buffer>();
  for (const { path: p, blob } of forge.materialize) written.set(p, (await getBlob(pool, blob.blob)).content);
  written.set(ARTIFACT_PATHS.feedbackHistory, Buffer.from(forge.feedbackHistory));
  const warnings: string[] = [];
  const refusedWrites = await refuseOutside(workspace, forge, written);
  const held = await keepPersonEdits(pool, workspace, forge);
  if (forge.patch) await writePatch(workspace, forge.patch);
  const artifacts = await collectArtifacts(pool, workspace, forge, warnings);
  return { artifacts, refusedWrites, held, warnings };
}
