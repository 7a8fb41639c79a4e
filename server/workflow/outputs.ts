// The rules the system enforces on agents' strict outputs rather than trusting the model:
// the whole reply must be one JSON document matching its schema (events/agent-outputs.ts),
// blocking findings forbid approve, and changed files must stay inside their globs.
import picomatch from "picomatch";
import type { z } from "zod";
import type { ReviewVerdict } from "../events/agent-outputs";

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** An output that failed its schema, as the session's outcome carries it if the session ends. */
export function schemaFailure(errors: string[]): { errorClass: "schema_invalid"; diagnosis: string } {
  return { errorClass: "schema_invalid", diagnosis: errors.join("; ").slice(0, 500) };
}

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
    return { ok: false, errors: [`not valid JSON: ${err instanceof Error ? err.message : String(err)}`] };
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
