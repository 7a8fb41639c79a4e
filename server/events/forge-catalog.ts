// The Forge pipeline's own events (req F2–F5, F11–F13; docs/forge.md): each version of a
// stage's artifacts (an agent's draft, a person's edit, a redraft held back), the writes a
// stage refused, the critiques with their findings and the anti-loop's reading, a failed
// check's triage, the progress cascaded from code metadata, and warnings. The stages,
// gates and a person's part are the workflow engine's events (catalog.ts). In the session's stream.
import { z } from "zod";
import { ZBlobRef } from "./blobs";
import { defineEvent } from "./registry";

const ZJson = z.json();
/** An artifact's JSON value as recorded (ArtifactRecorded.json, ArtifactEdited.json). */
export type ArtifactJson = z.infer<typeof ZJson>;

const ZArtifactVersion = {
  stage: z.string(),
  path: z.string(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  blob: ZBlobRef,
  size: z.number().int().nonnegative(),
  /** A JSON artifact's parsed value (what the rules read); absent for markdown and for invalid JSON. */
  json: ZJson.optional(),
  /** Schema and rule problems of this version. */
  problems: z.array(z.string()),
};
const ZForgeFinding = z.object({
  id: z.string(),
  severity: z.enum(["blocking", "major", "minor"]),
  message: z.string(),
  /** Who found it: the critic, or the rules checked by code. */
  source: z.enum(["critic", "rule"]),
});

export const forgeCatalog = {
  ArtifactRecorded: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), ...ZArtifactVersion }),
    summary: (d) =>
      `${d.path} drafted (${d.hash.slice(0, 10)}, ${d.size} bytes)${d.problems.length ? ` — ${d.problems.length} problem(s)` : ""}`,
  }),
  /** A person's edit of a draft: the hash it was made on and the new text (a blob). */
  ArtifactEdited: defineEvent({
    version: 1,
    schema: z.object({ baseHash: z.string().nullable(), ...ZArtifactVersion }),
    summary: (d) => `${d.path} edited by a person (${d.baseHash?.slice(0, 10) ?? "new"} → ${d.hash.slice(0, 10)})`,
  }),
  /** A write the stage does not allow: an agent's outside its globs, or anyone's to a completed stage. */
  ArtifactWriteRefused: defineEvent({
    version: 1,
    schema: z.object({
      stage: z.string().nullable(),
      stepId: z.uuid().optional(),
      by: z.enum(["agent", "person"]),
      paths: z.array(z.string()).min(1),
      reason: z.string(),
    }),
    summary: (d) => `Write refused (${d.by}): ${d.paths.join(", ")} — ${d.reason}`,
  }),
  /** A redraft that would have overwritten a person's edit: the person's text was kept; the agent's version waits here. */
  ArtifactDraftHeld: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      stage: z.string(),
      path: z.string(),
      hash: z.string(),
      blob: ZBlobRef,
      conflicts: z.number().int().nonnegative(),
    }),
    summary: (d) => `${d.path}: the agent's redraft conflicts with a person's edit in ${d.conflicts} place(s); the person's text was kept`,
  }),
  CritiqueRecorded: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      stage: z.string(),
      /** The critiques of the stage so far, this one included. */
      round: z.number().int().positive(),
      decision: z.enum(["pass", "revise", "escalate"]),
      modelDecision: z.enum(["pass", "revise"]),
      summary: z.string(),
      findings: z.array(ZForgeFinding),
      loop: z.object({
        similarity: z.number().nullable(),
        persisted: z.array(z.string()),
        reopened: z.array(z.string()),
        stalled: z.boolean(),
        warning: z.string().nullable(),
        escalate: z.string().nullable(),
      }),
    }),
    summary: (d) =>
      `Critique of ${d.stage} (round ${d.round}): ${d.decision}${d.findings.length ? ` — ${d.findings.filter((f) => f.severity === "blocking").length} blocking` : ""}${d.loop.escalate ? ` — ${d.loop.escalate}` : d.loop.warning ? ` — warning: ${d.loop.warning}` : ""}`,
  }),
  /** A failed check's triage: the stage the failure goes back to (req F13). */
  CheckRouted: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), goto: z.enum(["prd", "design", "plan", "coding"]), reason: z.string() }),
    summary: (d) => `The failed check goes back to ${d.goto}: ${d.reason}`,
  }),
  /** Task status from the coder's code_metadata.json, cascaded to each feature. */
  ProgressRecorded: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      tasks: z.array(z.object({ id: z.string(), status: z.enum(["pending", "in_progress", "done"]) })),
      features: z.array(
        z.object({ id: z.string(), status: z.enum(["pending", "in_progress", "done"]), tasks: z.number().int(), done: z.number().int() }),
      ),
    }),
    summary: (d) => `Progress: ${d.features.map((f) => `${f.id} ${f.status} (${f.done}/${f.tasks})`).join(", ")}`,
  }),
  ForgeWarning: defineEvent({
    version: 1,
    schema: z.object({ stage: z.string().nullable(), message: z.string() }),
    summary: (d) => `Warning${d.stage ? ` (${d.stage})` : ""}: ${d.message}`,
  }),
} as const;
