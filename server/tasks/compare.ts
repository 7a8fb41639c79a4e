// Two branches of a fork tree side by side (req E5): where they diverged (the events both
// read, and whose they are), each one's state, verdict and test results, their artifacts'
// texts (a staged workflow's), and the code between their last commits (git, in the project's
// repository, the commits fetched from a session's bundles when this clone lacks them).
import { z } from "zod";
import { AppError } from "../errors";
import { appRegistry } from "../events/catalog";
import { getBlob } from "../events/blobs";
import { sessionBundles } from "../events/bundle-chain";
import type { RecordedEvent } from "../events/types";
import { FORGE_DIR } from "../forge/artifacts";
import { foldTask, type StartedTask } from "../task-engine";
import { diffCommits, ensureCommit } from "../workspaces";
import type { TaskDeps } from "./commands";

export const ZCompareInput = z.object({ a: z.string().min(1).max(100), b: z.string().min(1).max(100) });

/** An artifact's text is shown up to this many bytes; the code's diff up to MAX_DIFF characters. */
const MAX_TEXT = 100_000;
const MAX_DIFF = 300_000;

export interface BranchSide {
  sessionId: string;
  title: string;
  workflow: string;
  state: string;
  status: "active" | "finished";
  outcome: string | null;
  iteration: number;
  head: string;
  events: number;
  fork: { parentId: string; atVersion: number; reason: string; note: string | null; by: string } | null;
  verdict: StartedTask["lastVerdict"];
  /** The latest commands step's results. */
  tests: Array<{ argv: string[]; passed: boolean; exitCode: number | null }>;
  critiques: Array<{ stage: string; decision: string; summary: string }>;
}

export interface ArtifactPair {
  path: string;
  a: { hash: string; by: string; text: string | null } | null;
  b: { hash: string; by: string; text: string | null } | null;
  same: boolean;
}

export interface Comparison {
  a: BranchSide;
  b: BranchSide;
  /** How many events both read (their common history), and the last of them. */
  divergence: { shared: number; streamId: string | null; type: string | null; summary: string | null };
  artifacts: ArtifactPair[];
  code: {
    same: boolean;
    files: Array<{ path: string; added: number; removed: number }>;
    diff: string;
    truncated: boolean;
    error: string | null;
  };
}

function side(sessionId: string, events: RecordedEvent[]): { view: BranchSide; state: StartedTask } {
  const state = foldTask(events);
  if (state.status === "none") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  const forked = events.filter((e) => e.type === "SessionForked").at(-1);
  const forkData = forked?.data as { parentId: string; atVersion: number; reason: string; note?: string } | undefined;
  const lastCommands = events.filter((e) => e.type === "StepScheduled" && (e.data as { kind: string }).kind === "commands").at(-1);
  const stepId = (lastCommands?.data as { stepId?: string } | undefined)?.stepId;
  const tests = events
    .filter((e) => e.type === "TestCommandRecorded" && (e.data as { stepId: string }).stepId === stepId)
    .map((e) => {
      const d = e.data as { argv: string[]; passed: boolean; exitCode: number | null };
      return { argv: d.argv, passed: d.passed, exitCode: d.exitCode };
    });
  const critiques = Object.entries(state.pipeline.critiques).flatMap(([stage, list]) => {
    const last = events.filter((e) => e.type === "CritiqueRecorded" && (e.data as { stage: string }).stage === stage).at(-1);
    const d = last?.data as { decision: string; summary: string } | undefined;
    return d && list.length ? [{ stage, decision: d.decision, summary: d.summary }] : [];
  });
  return {
    state,
    view: {
      sessionId,
      title: (events[0]!.data as { title?: string }).title ?? sessionId,
      workflow: state.config.workflow,
      state: state.fsm,
      status: state.status,
      outcome: state.status === "finished" ? state.outcome : null,
      iteration: state.iteration,
      head: state.head,
      events: events.length,
      fork:
        forked && forkData
          ? {
              parentId: forkData.parentId,
              atVersion: forkData.atVersion,
              reason: forkData.reason,
              note: forkData.note ?? null,
              by: `${forked.metadata.actor.kind}:${forked.metadata.actor.id}`,
            }
          : null,
      verdict: state.lastVerdict,
      tests,
      critiques,
    },
  };
}

async function textOf(deps: TaskDeps, blob: string, size: number): Promise<string | null> {
  if (size > MAX_TEXT) return null;
  return (await getBlob(deps.pool, blob)).content.toString("utf8");
}

async function artifactPairs(deps: TaskDeps, a: StartedTask, b: StartedTask): Promise<ArtifactPair[]> {
  const paths = [...new Set([...Object.keys(a.pipeline.artifacts), ...Object.keys(b.pipeline.artifacts)])].sort();
  return Promise.all(
    paths.map(async (path) => {
      const x = a.pipeline.artifacts[path];
      const y = b.pipeline.artifacts[path];
      const same = !!x && !!y && x.hash === y.hash;
      const load = async (entry: typeof x) =>
        entry ? { hash: entry.hash, by: entry.by, text: same ? null : await textOf(deps, entry.blob.blob, entry.size) } : null;
      return { path, a: await load(x), b: await load(y), same };
    }),
  );
}

async function codeBetween(
  deps: TaskDeps,
  a: { sessionId: string; state: StartedTask },
  b: { sessionId: string; state: StartedTask },
): Promise<Comparison["code"]> {
  if (a.state.head === b.state.head) return { same: true, files: [], diff: "", truncated: false, error: null };
  const repo = a.state.config.project.repoPath;
  try {
    for (const s of [a, b]) await ensureCommit(repo, s.state.head, sessionBundles(deps.pool, s.sessionId));
    const { diff, files } = await diffCommits(repo, a.state.head, b.state.head, [FORGE_DIR]);
    return { same: files.length === 0, files, diff: diff.slice(0, MAX_DIFF), truncated: diff.length > MAX_DIFF, error: null };
  } catch (err) {
    return { same: false, files: [], diff: "", truncated: false, error: `the code cannot be compared here: ${(err as Error).message}` };
  }
}

export async function compareSessions(deps: TaskDeps, raw: z.input<typeof ZCompareInput>): Promise<Comparison> {
  const input = ZCompareInput.parse(raw);
  if (input.a === input.b) throw new AppError("INVALID_INPUT", "pick two different sessions to compare");
  const [ea, eb] = await Promise.all([deps.store.readStream(input.a), deps.store.readStream(input.b)]);
  if (!ea.length) throw new AppError("NOT_FOUND", `no session ${input.a}`);
  if (!eb.length) throw new AppError("NOT_FOUND", `no session ${input.b}`);
  const a = side(input.a, ea);
  const b = side(input.b, eb);
  if (a.state.config.project.id !== b.state.config.project.id) {
    throw new AppError(
      "INVALID_INPUT",
      `${input.a} and ${input.b} are sessions of different projects: there is no common history to compare`,
    );
  }
  // Both read the same event objects up to where they diverged (a fork copies nothing).
  let shared = 0;
  while (shared < ea.length && shared < eb.length && ea[shared]!.eventId === eb[shared]!.eventId) shared++;
  const last = shared ? ea[shared - 1]! : null;
  const [artifacts, code] = await Promise.all([
    artifactPairs(deps, a.state, b.state),
    codeBetween(deps, { sessionId: input.a, state: a.state }, { sessionId: input.b, state: b.state }),
  ]);
  return {
    a: a.view,
    b: b.view,
    divergence: {
      shared,
      streamId: last?.streamId ?? null,
      type: last?.type ?? null,
      summary: last ? appRegistry.summarize(last.type, last.data) : null,
    },
    artifacts,
    code,
  };
}
