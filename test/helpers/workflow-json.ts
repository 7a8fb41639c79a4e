// A small user workflow as JSON (loosely typed, so tests can reorder or break it), shared by
// the workflow unit tests that need one of their own.

export type Loose = Record<string, unknown>;
/** A definition as a user would write it in JSON: loosely typed, so tests can break it. */
export interface DefinitionJson extends Loose {
  initial: string;
  modes: string[];
  global: Record<string, string>;
  states: Record<string, Loose & { type: string; step?: Loose; on?: Record<string, unknown> }>;
}

/** A small valid workflow: start → work ⇄ check → approved, with a capped loop. */
export function mini(): DefinitionJson {
  return {
    id: "mini",
    version: 1,
    title: "Mini loop",
    modes: ["implementation"],
    initial: "start",
    global: { cancel: "cancelled", step_failed: "failed" },
    states: {
      start: { type: "wait", on: { start: [{ target: "work" }] } },
      work: {
        type: "step",
        step: { role: "coder", output: "build", phase: "build", instruction: "Build it." },
        on: { done: [{ target: "check" }] },
      },
      check: {
        type: "step",
        step: { role: "reviewer", output: "review_verdict", phase: "verdict", instruction: "Review it." },
        on: {
          approve: [{ target: "approved" }],
          changes_requested: [
            { target: "work", guard: "under_cap", iterate: true, reason: "changes_requested" },
            { target: "failed", guard: "at_cap" },
          ],
          schema_invalid: [{ target: "failed" }],
        },
      },
      approved: { type: "terminal", outcome: "approved" },
      failed: { type: "terminal", outcome: "failed" },
      cancelled: { type: "terminal", outcome: "cancelled" },
    },
  };
}
