// The strict outputs agents must produce in the gated phases: a reviewer's verdict, a
// tester's plan, a planner's TaskSpec. They are recorded as parsed (AgentOutputRecorded,
// TaskSpecRecorded), so the event catalog declares its data with them; the rules the
// system enforces on them live with the engine (workflow/outputs.ts).
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

/** What an agent's output parsed into, as AgentOutputRecorded records it (null for prose and builds). */
export const ZParsedOutput = z.union([ZReviewVerdict, ZTestPlan, ZTaskSpec]);
export type ParsedOutput = z.infer<typeof ZParsedOutput>;
