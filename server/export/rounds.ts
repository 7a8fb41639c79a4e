// Renders each round's folder of the export: raw outputs, parsed JSON, meta, events, test
// results and diffs. The rounds themselves are server/sessions/rounds.ts's, the model the
// replay panel shows too (one per workflow iteration; the proposal roundtable is round 1).
import type { AgentUsage } from "../agent-calls";
import { actorLabel } from "../events/catalog";
import type { RoundSlice } from "../sessions/rounds";
import { redactEventData } from "./redact";
import { jsonFile, jsonLines, type BlobLoader, type ExportFiles, type SessionEvent, type SessionEventOf } from "./types";

export function roundDir(round: number): string {
  return `rounds/${String(round).padStart(2, "0")}`;
}

/** An event as a line of `events.jsonl`: everything recorded, agent env values redacted. */
export function eventRecord(e: SessionEvent) {
  return {
    version: e.version,
    streamId: e.streamId,
    eventId: e.eventId,
    type: e.type,
    recordedAt: e.recordedAt,
    actor: actorLabel(e.metadata.actor),
    metadata: e.metadata,
    data: redactEventData(e.type, e.data),
  };
}

export interface OutputMeta {
  /** Raw output file, relative to the round folder. */
  file: string;
  /** Parsed JSON file, when the output was parsed. */
  parsedFile: string | null;
  version: number;
  stepId: string;
  attempt: number;
  role: string;
  phase: string;
  agentId: string;
  simulated: boolean;
  usage: AgentUsage | null;
  validationErrors: string[];
  raw: { blob: string; size: number; mediaType: string };
}

export interface StepAttemptMeta {
  attempt: number;
  runnerId: string | null;
  startedAt: string | null;
  outcome: "running" | "completed" | "failed" | "released" | "cancelled";
  errorClass: string | null;
  message: string | null;
}

export interface StepMeta {
  stepId: string;
  kind: string | null;
  state: string | null;
  role: string | null;
  scheduledVersion: number | null;
  attempts: StepAttemptMeta[];
}

export interface CommitMeta {
  stepId: string;
  commit: string;
  parent: string;
  empty: boolean;
  changedFiles: SessionEventOf<"WorkspaceCommitted">["data"]["changedFiles"];
  /** Diff file, relative to the round folder; null for an empty commit. */
  diffFile: string | null;
}

export interface RoundMeta {
  round: number;
  dir: string;
  reason: string;
  firstVersion: number;
  lastVersion: number;
  startedAt: string;
  endedAt: string;
  outputs: OutputMeta[];
  steps: StepMeta[];
  commits: CommitMeta[];
  /** Review decisions of the round (after the system's decision rule). */
  verdicts: string[];
  tests: { passed: number; failed: number };
  /** Executions the orchestrator rejected, with why. */
  rejections: string[][];
}

/** A name not used yet in this round: `base`, then `base-2`, `base-3`, ... */
function uniqueName(used: Map<string, number>, base: string): string {
  const n = (used.get(base) ?? 0) + 1;
  used.set(base, n);
  return n === 1 ? base : `${base}-${n}`;
}

function stepMetas(events: SessionEvent[]): StepMeta[] {
  const steps = new Map<string, StepMeta>();
  const step = (stepId: string): StepMeta => {
    let s = steps.get(stepId);
    if (!s) {
      s = { stepId, kind: null, state: null, role: null, scheduledVersion: null, attempts: [] };
      steps.set(stepId, s);
    }
    return s;
  };
  const attempt = (s: StepMeta, n: number): StepAttemptMeta => {
    let a = s.attempts.find((x) => x.attempt === n);
    if (!a) {
      a = { attempt: n, runnerId: null, startedAt: null, outcome: "running", errorClass: null, message: null };
      s.attempts.push(a);
    }
    return a;
  };
  for (const e of events) {
    switch (e.type) {
      case "StepScheduled": {
        const input = e.data.input as { state?: unknown; role?: unknown } | null;
        Object.assign(step(e.data.stepId), {
          kind: e.data.kind,
          state: typeof input?.state === "string" ? input.state : null,
          role: typeof input?.role === "string" ? input.role : null,
          scheduledVersion: e.version,
        });
        break;
      }
      case "StepStarted":
        Object.assign(attempt(step(e.data.stepId), e.data.attempt), { runnerId: e.data.runnerId, startedAt: e.recordedAt });
        break;
      case "StepCompleted":
        attempt(step(e.data.stepId), e.data.attempt).outcome = "completed";
        break;
      case "StepFailed":
        Object.assign(attempt(step(e.data.stepId), e.data.attempt), {
          outcome: "failed",
          errorClass: e.data.errorClass,
          message: e.data.message,
        });
        break;
      case "StepReleased":
        Object.assign(attempt(step(e.data.stepId), e.data.attempt), { outcome: "released", message: e.data.reason });
        break;
      case "StepCancelled": {
        const last = step(e.data.stepId).attempts.at(-1);
        if (last && last.outcome === "running") last.outcome = "cancelled";
        break;
      }
      default:
        break;
    }
  }
  return [...steps.values()];
}

/** Adds the round's files to `files` and returns what its meta.json says. */
export async function renderRound(slice: RoundSlice, loadBlob: BlobLoader, files: ExportFiles): Promise<RoundMeta> {
  const dir = roundDir(slice.round);
  const used = new Map<string, number>();
  const outputs: OutputMeta[] = [];
  const commits: CommitMeta[] = [];
  const verdicts: string[] = [];
  const rejections: string[][] = [];
  const testResults: SessionEventOf<"TestCommandRecorded">["data"][] = [];
  const roundFiles: Array<[string, Buffer | string]> = [];

  for (const e of slice.events) {
    switch (e.type) {
      case "AgentOutputRecorded": {
        const d = e.data;
        const name = uniqueName(used, `${d.role}-${d.phase}`);
        const parsedFile = d.parsed === null ? null : `${name}.parsed.json`;
        roundFiles.push([`${name}.txt`, await loadBlob(d.raw.blob)]);
        if (parsedFile) roundFiles.push([parsedFile, jsonFile(d.parsed)]);
        outputs.push({
          file: `${name}.txt`,
          parsedFile,
          version: e.version,
          stepId: d.stepId,
          attempt: d.attempt,
          role: d.role,
          phase: d.phase,
          agentId: d.agentId,
          simulated: d.simulated,
          usage: d.usage ?? null,
          validationErrors: d.validationErrors,
          raw: d.raw,
        });
        break;
      }
      case "WorkspaceCommitted": {
        const d = e.data;
        const diffFile = d.empty ? null : `${uniqueName(used, "changes")}.diff`;
        if (diffFile) roundFiles.push([diffFile, await loadBlob(d.diff.blob)]);
        commits.push({ stepId: d.stepId, commit: d.commit, parent: d.parent, empty: d.empty, changedFiles: d.changedFiles, diffFile });
        break;
      }
      case "ReviewVerdictRecorded":
        verdicts.push(e.data.decision);
        break;
      case "ExecutionRejected":
        rejections.push(e.data.reasons);
        break;
      case "TestCommandRecorded":
        testResults.push(e.data);
        break;
      default:
        break;
    }
  }

  const first = slice.events[0]!;
  const last = slice.events.at(-1)!;
  const meta: RoundMeta = {
    round: slice.round,
    dir,
    reason: slice.reason,
    firstVersion: first.version,
    lastVersion: last.version,
    startedAt: first.recordedAt,
    endedAt: last.recordedAt,
    outputs,
    steps: stepMetas(slice.events),
    commits,
    verdicts,
    tests: { passed: testResults.filter((t) => t.passed).length, failed: testResults.filter((t) => !t.passed).length },
    rejections,
  };
  files.set(`${dir}/meta.json`, jsonFile(meta));
  files.set(`${dir}/events.jsonl`, jsonLines(slice.events.map(eventRecord)));
  files.set(`${dir}/test-results.json`, jsonFile(testResults));
  for (const [name, content] of roundFiles) files.set(`${dir}/${name}`, content);
  return meta;
}
