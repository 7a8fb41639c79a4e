// Forge's slice of a task (docs/forge.md): what the pipeline's steps produced, folded from
// the session's events beside the engine's own fields (server/workflow/state.ts holds the
// stage the session is in, iterations per stage, the stages completed, a person asked and
// the budget). Every workflow's tasks carry it; it stays empty outside a staged workflow.
// Pure and cheap like the engine's fold: the events' data is typed by the catalog already.
import type { BlobRef } from "../events/blobs";
import type { AppEventOf, AppFoldEvent } from "../events/catalog";
import type { ArtifactJson } from "../events/forge-catalog";
import type { SliceFold, StartedTask } from "../workflow/engine";
import { CHANGE_STAGE } from "./artifacts";

/** One version of a stage's artifact, as the log recorded it (agent draft or person edit). */
export interface ArtifactEntry {
  stage: string;
  hash: string;
  blob: BlobRef;
  size: number;
  by: "agent" | "person";
  json?: ArtifactJson;
  problems: string[];
  /**
   * How many thread messages there were when this version was recorded (the writing step's own
   * message the last of them): a prompt shows it right after that message (docs/scaling.md,
   * "Prompt economics").
   */
  shownAfter: number;
}

/** A person's edit of an artifact: what it was made on, the person's text, and its event's version. */
export interface PersonEdit {
  base: BlobRef | null;
  edited: BlobRef;
  version: number;
}

/**
 * One version of an artifact in its history (an agent's draft or a person's edit; a held-back
 * redraft is not a version): the one list every reader numbers v1…vN from. `keptEdits`: the
 * event versions of the person's edits an agent's draft kept (merged in), so the draft is
 * credited to them too.
 */
export interface VersionEntry {
  version: number;
  hash: string;
  kind: "draft" | "edit";
  keptEdits: number[];
}

/** Feedback to a stage's actor: a person's, guidance after a failure, or a critic's revise. */
export interface Feedback {
  stage: string | null;
  iteration: number;
  source: "person" | "guidance" | "critic";
  severity: string;
  text: string;
}

/** What the Forge pipeline adds to a task's progress. */
export interface Pipeline {
  /** path → its current version. */
  artifacts: Record<string, ArtifactEntry>;
  /** path → its versions, oldest first. */
  versions: Record<string, VersionEntry[]>;
  /** path → a person's edits of it, oldest first (kept by every later redraft). */
  edits: Record<string, PersonEdit[]>;
  /** path → an agent's redraft held back because it conflicted with a person's edit. */
  held: Record<string, { hash: string; blob: BlobRef; conflicts: number }>;
  feedback: Feedback[];
  /** stage → its critiques, oldest first. */
  critiques: Record<string, Array<{ blocking: string[]; text: string; decision: AppEventOf<"CritiqueRecorded">["data"]["decision"] }>>;
  /** stage → the files its commits changed. */
  changed: Record<string, string[]>;
  /** A modify fork's change request (null in every other session). */
  change: Omit<AppEventOf<"ChangeRequested">["data"], "fingerprint"> | null;
}

export const emptyPipeline: Pipeline = {
  artifacts: {},
  versions: {},
  edits: {},
  held: {},
  feedback: [],
  critiques: {},
  changed: {},
  change: null,
};

/** One event of a started task folded into its pipeline, the task as it was before the event. */
export function evolvePipeline(p: Pipeline, event: AppFoldEvent, task: StartedTask<Pipeline>): Pipeline {
  switch (event.type) {
    case "ArtifactRecorded":
    case "ArtifactEdited": {
      const { stage, hash, blob, size, json, problems, path } = event.data;
      const by = event.type === "ArtifactEdited" ? "person" : "agent";
      const entry: ArtifactEntry = {
        stage,
        hash,
        blob,
        size,
        by,
        problems,
        shownAfter: task.threadCount,
        ...(json !== undefined ? { json } : {}),
      };
      const { [path]: _held, ...held } = p.held;
      // A person who takes the agent's held-back version over their own lets go of their
      // earlier edits of that file; any other edit joins them, to be kept by every redraft.
      const accepted = event.type === "ArtifactEdited" && p.held[path]?.hash === hash;
      const edits =
        event.type !== "ArtifactEdited"
          ? p.edits
          : accepted
            ? { ...p.edits, [path]: [] }
            : {
                ...p.edits,
                [path]: [...(p.edits[path] ?? []), { base: p.artifacts[path]?.blob ?? null, edited: blob, version: event.version }],
              };
      // An agent's draft keeps every edit the person made since they last took the agent's version.
      const version: VersionEntry = {
        version: event.version,
        hash,
        kind: event.type === "ArtifactEdited" ? "edit" : "draft",
        keptEdits: event.type === "ArtifactEdited" ? [] : (p.edits[path] ?? []).map((e) => e.version),
      };
      // A person's edit settles what was held back for that file; an agent's draft does not.
      return {
        ...p,
        artifacts: { ...p.artifacts, [path]: entry },
        versions: { ...p.versions, [path]: [...(p.versions[path] ?? []), version] },
        edits,
        held: event.type === "ArtifactEdited" ? held : p.held,
      };
    }
    case "ArtifactDraftHeld":
      return {
        ...p,
        held: { ...p.held, [event.data.path]: { hash: event.data.hash, blob: event.data.blob, conflicts: event.data.conflicts } },
      };
    case "FeedbackGiven":
      return {
        ...p,
        feedback: [
          ...p.feedback,
          {
            stage: event.data.stage,
            iteration: event.data.iteration,
            source: event.data.source,
            severity: event.data.severity,
            text: event.data.text,
          },
        ],
      };
    case "CritiqueRecorded": {
      const blocking = event.data.findings.filter((f) => f.severity === "blocking").map((f) => f.id);
      const text = [event.data.summary, ...event.data.findings.map((f) => f.message)].join("\n");
      const stageCritiques = [...(p.critiques[event.data.stage] ?? []), { blocking, text, decision: event.data.decision }];
      return {
        ...p,
        critiques: { ...p.critiques, [event.data.stage]: stageCritiques },
        feedback:
          event.data.decision === "pass"
            ? p.feedback
            : [...p.feedback, { stage: event.data.stage, iteration: task.iteration, source: "critic", severity: "normal", text }],
      };
    }
    case "CheckRouted":
      // The triage's reason is feedback to the stage it sends the pipeline back to.
      return {
        ...p,
        feedback: [
          ...p.feedback,
          {
            stage: event.data.goto,
            iteration: task.iteration,
            source: "critic",
            severity: "normal",
            text: `check failed: ${event.data.reason}`,
          },
        ],
      };
    case "WorkspaceCommitted": {
      // The files each stage's commits changed (the Coding rules read them).
      const stage = task.stages.current;
      if (!stage) return p;
      const files = [...new Set([...(p.changed[stage] ?? []), ...event.data.changedFiles.map((f) => f.path)])];
      return { ...p, changed: { ...p.changed, [stage]: files } };
    }
    case "ChangeRequested": {
      // A modify fork's change; an earlier change's triage (a modify of a modify) is not this one's.
      const { fingerprint: _fingerprint, ...change } = event.data;
      const earlier = new Set(Object.entries(p.artifacts).flatMap(([path, a]) => (a.stage === CHANGE_STAGE ? [path] : [])));
      return {
        ...p,
        change,
        artifacts: Object.fromEntries(Object.entries(p.artifacts).filter(([path]) => !earlier.has(path))),
        versions: Object.fromEntries(Object.entries(p.versions).filter(([path]) => !earlier.has(path))),
      };
    }
    default:
      return p;
  }
}

/** A critique's findings other than minor are the round's open issues (the actor's next prompt). */
export function critiqueIssues(event: AppFoldEvent): string[] | null {
  if (event.type !== "CritiqueRecorded") return null;
  return event.data.findings.filter((f) => f.severity !== "minor").map((f) => `[${f.severity}] ${f.id}: ${f.message}`);
}

/** The pipeline as a slice of the engine's fold (server/workflow/state.ts). */
export const pipelineFold: SliceFold<Pipeline> = { initial: emptyPipeline, evolve: evolvePipeline, openIssues: critiqueIssues };
