// The Forge pipeline's artifacts (req F4): the files each stage writes under `.forge/` in
// the session's worktree, and the zod schema each JSON artifact must meet. Markdown
// artifacts are free text; a JSON artifact that does not parse or fails its schema is a
// problem of the stage, reported like a rule (rules.ts) and shown to the critic and the person.
import { z } from "zod";
import type { ArtifactJson } from "../events/forge-catalog";

export const FORGE_DIR = ".forge";

/** The stages, in order (req F1). */
export const FORGE_STAGES = ["idea", "prd", "design", "plan", "coding", "check", "delivery"] as const;
export type ForgeStage = (typeof FORGE_STAGES)[number];
/** The stage of a modify session's triage of the change. */
export const CHANGE_STAGE = "change";
/** The stages only a modify session enters (req F5): the change's triage, and its report. */
export const MODIFY_STAGES: readonly string[] = [CHANGE_STAGE, "report"];

export const ARTIFACT_PATHS = {
  idea: `${FORGE_DIR}/idea.md`,
  prd: `${FORGE_DIR}/prd.md`,
  requirements: `${FORGE_DIR}/requirements.json`,
  features: `${FORGE_DIR}/features.json`,
  design: `${FORGE_DIR}/design.md`,
  designSpec: `${FORGE_DIR}/design_spec.json`,
  plan: `${FORGE_DIR}/plan.json`,
  codeMetadata: `${FORGE_DIR}/code_metadata.json`,
  deliveryReport: `${FORGE_DIR}/delivery_report.md`,
  /** A modify session's triage of the change (req F5). */
  changeRequest: `${FORGE_DIR}/change_request.json`,
  /** A modify session's pull-request-style report; its "Patch" section is written by the runner from the diff. */
  changeReport: `${FORGE_DIR}/change_report.md`,
  /** A modify session's patch metadata, computed by the runner from git (no agent writes it). */
  patch: `${FORGE_DIR}/patch.json`,
  /** Written by the runner from the session's feedback events before every step; no agent writes it. */
  feedbackHistory: `${FORGE_DIR}/feedback_history.json`,
} as const;

const ZId = z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, "ids are a letter then letters, digits, _ . - (at most 64)");
const ZText = z.string().trim().min(1).max(4000);
const ZStatus = z.enum(["pending", "in_progress", "done"]);

export const ZRequirements = z.strictObject({
  requirements: z.array(
    z.strictObject({ id: ZId, title: ZText, description: ZText, priority: z.enum(["must", "should", "could"]).optional() }),
  ),
});
export type Requirements = z.infer<typeof ZRequirements>;

export const ZFeatures = z.strictObject({
  features: z.array(
    z.strictObject({
      id: ZId,
      name: ZText,
      description: ZText,
      /** The requirements the feature serves. */
      requirements: z.array(ZId).default([]),
      status: ZStatus.default("pending"),
    }),
  ),
});
export type Features = z.infer<typeof ZFeatures>;

export const ZDesignSpec = z.strictObject({
  architecture: ZText.optional(),
  components: z.array(
    z.strictObject({
      id: ZId,
      name: ZText,
      responsibility: ZText,
      technology: ZText.optional(),
      /** Why a microservice, cache or queue is needed; without it such a component breaks the rule. */
      justification: ZText.optional(),
    }),
  ),
  storage: ZText.optional(),
});
export type DesignSpec = z.infer<typeof ZDesignSpec>;

export const ZPlan = z.strictObject({
  tasks: z.array(
    z.strictObject({
      id: ZId,
      title: ZText,
      description: ZText.optional(),
      /** The feature the task builds. */
      feature: ZId,
      dependsOn: z.array(ZId).default([]),
      status: ZStatus.default("pending"),
    }),
  ),
});
export type Plan = z.infer<typeof ZPlan>;

export const ZCodeMetadata = z.strictObject({
  files: z.array(z.string().min(1).max(500)).default([]),
  /** Task status as the coder leaves it: each change cascades to the task's feature. */
  tasks: z.array(z.strictObject({ id: ZId, status: ZStatus })).default([]),
  /** The commands Check runs (through the project's allowlist). */
  checks: z
    .array(z.strictObject({ argv: z.array(z.string().min(1)).min(1), expect: z.strictObject({ exitCode: z.number().int() }).optional() }))
    .default([]),
});
export type CodeMetadata = z.infer<typeof ZCodeMetadata>;

/** The layers a change can touch, from the earliest (req F5). */
export const CHANGE_LAYERS = ["prd", "design", "plan", "code"] as const;

/** A modify session's change request: the triage's strict JSON (req F5). */
export const ZChangeRequest = z.strictObject({
  summary: ZText,
  layers: z.array(z.enum(CHANGE_LAYERS)).min(1, "name at least one layer the change touches"),
  risk: z.enum(["low", "medium", "high"]),
  /** Design component ids (or names) the change affects. */
  components: z.array(z.string().min(1).max(200)).default([]),
  constraints: z.array(ZText).default([]),
  acceptanceCriteria: z.array(ZText).min(1, "say how the change will be accepted"),
});
export type ChangeRequest = z.infer<typeof ZChangeRequest>;

/** What a modify session's patch is, as the runner computed it from git. */
export const ZPatch = z.strictObject({
  baseCommit: z.string(),
  headCommit: z.string(),
  files: z.array(z.strictObject({ path: z.string(), status: z.string(), added: z.number().int(), removed: z.number().int() })),
  added: z.number().int(),
  removed: z.number().int(),
  /** The base plan's tasks this session's plan kept unchanged, changed, added and dropped. */
  tasks: z.strictObject({ kept: z.number().int(), changed: z.number().int(), added: z.number().int(), removed: z.number().int() }),
});
export type Patch = z.infer<typeof ZPatch>;

/** The schema of each JSON artifact, by path: each parses into a JSON value, recorded as it is. */
export const ARTIFACT_SCHEMAS: Record<string, z.ZodType<ArtifactJson>> = {
  [ARTIFACT_PATHS.requirements]: ZRequirements,
  [ARTIFACT_PATHS.features]: ZFeatures,
  [ARTIFACT_PATHS.designSpec]: ZDesignSpec,
  [ARTIFACT_PATHS.plan]: ZPlan,
  [ARTIFACT_PATHS.codeMetadata]: ZCodeMetadata,
  [ARTIFACT_PATHS.changeRequest]: ZChangeRequest,
  [ARTIFACT_PATHS.patch]: ZPatch,
};

/** An artifact's text checked against its schema: the parsed value (JSON artifacts) and every problem. */
export function parseArtifact(path: string, text: string): { json?: ArtifactJson; problems: string[] } {
  const schema = ARTIFACT_SCHEMAS[path];
  if (!schema) return text.trim() ? { problems: [] } : { problems: [`${path} is empty`] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { problems: [`${path} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`] };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    return { problems: parsed.error.issues.map((i) => `${path}: ${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`) };
  }
  return { json: parsed.data, problems: [] };
}

/** The critic's strict JSON (req F2): like a review verdict, with a stable id per finding. */
export const ZCritique = z.strictObject({
  decision: z.enum(["pass", "revise"]),
  summary: z.string().max(4000),
  findings: z.array(
    z.strictObject({
      /** Stable across iterations: the same problem keeps its id, so a loop can be seen (lower-kebab). */
      id: z.string().regex(/^[a-z0-9][a-z0-9.:-]{0,79}$/, "a stable lower-kebab id, e.g. prd-too-many-requirements"),
      severity: z.enum(["blocking", "major", "minor"]),
      message: z.string().min(1).max(2000),
    }),
  ),
});
export type Critique = z.infer<typeof ZCritique>;

/** The check's triage after a failed check (req F13): the stage the failure goes back to, and why. */
export const ZRoute = z.strictObject({
  goto: z.enum(["prd", "design", "plan", "coding"]),
  reason: z.string().min(1).max(4000),
});
export type Route = z.infer<typeof ZRoute>;
