// The strict outputs agents must produce in the gated phases, and the rules the system
// enforces on them rather than trusting the model (e.g. blocking findings forbid approve).
import picomatch from "picomatch";
import { z } from "zod";

export const ZReviewFinding = z
  .object({
    severity: z.enum(["blocking", "major", "minor", "nit"]),
    file: z.string().min(1),
    line: z.number().int().positive().optional(),
    message: z.string().min(1),
  })
  .strict();
export type ReviewFinding = z.infer<typeof ZReviewFinding>;

export const ZReviewVerdict = z
  .object({
    decision: z.enum(["approve", "changes_requested"]),
    summary: z.string().min(1),
    findings: z.array(ZReviewFinding),
  })
  .strict();
export type ReviewVerdict = z.infer<typeof ZReviewVerdict>;

export const ZTestCommand = z
  .object({
    /** argv, never a shell string: run without a shell through the allowlist. */
    argv: z.array(z.string().min(1)).min(1),
    description: z.string().optional(),
    expect: z
      .object({ exitCode: z.number().int().default(0) })
      .strict()
      .default({ exitCode: 0 }),
  })
  .strict();
export const ZTestPlan = z
  .object({
    summary: z.string().min(1),
    commands: z.array(ZTestCommand).min(1).max(20),
  })
  .strict();
export type TestPlan = z.infer<typeof ZTestPlan>;

export const ZTaskSpec = z
  .object({
    title: z.string().min(3),
    description: z.string().min(10),
    acceptanceCriteria: z.array(z.string().min(5)).min(1),
    /** The files the executor is to change (paths or globs, relative to the repository). */
    files: z.array(z.string().min(1)).min(1),
    tests: z.array(ZTestCommand).default([]),
  })
  .strict();
export type TaskSpec = z.infer<typeof ZTaskSpec>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/**
 * Strict JSON: the whole reply must be one JSON document (one surrounding ```json fence is
 * tolerated, nothing else), and it must match the schema exactly.
 */
export function parseStrictJson<T>(text: string, schema: z.ZodType<T>): Parsed<T> {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*)\n```$/.exec(trimmed);
  let json: unknown;
  try {
    json = JSON.parse(fenced ? fenced[1]! : trimmed);
  } catch (err) {
    return { ok: false, errors: [`not valid JSON: ${(err as Error).message}`] };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    return { ok: false, errors: parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`) };
  }
  return { ok: true, value: parsed.data };
}

export interface EnforcedVerdict {
  decision: "approve" | "changes_requested";
  /** Set when the system overrode the model's decision, saying why. */
  override: string | null;
}

/** The decision rule, enforced by the system: any blocking finding forbids approve. */
export function enforceReviewRule(verdict: ReviewVerdict): EnforcedVerdict {
  const blocking = verdict.findings.filter((f) => f.severity === "blocking").length;
  if (verdict.decision === "approve" && blocking > 0) {
    return { decision: "changes_requested", override: `decision rule: ${blocking} blocking finding(s) forbid approve` };
  }
  return { decision: verdict.decision, override: null };
}

/** Files outside every allowed glob (an empty allow-list allows nothing). */
export function filesOutside(files: string[], globs: string[]): string[] {
  const matchers = globs.map((g) => picomatch(g, { dot: true }));
  return files.filter((f) => !matchers.some((m) => m(f)));
}
