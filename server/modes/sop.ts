// sop (req C4): ordered steps as data. Each step calls one agent with its instruction; the
// next step is the first branch whose condition holds on the reply's structured field (the
// reply's JSON object: `field` equals `equals`), else `next`, else the following step; `null`
// ends the procedure. A step entered more than `maxVisits` times (a loop) stops for a
// person; a reply without the field a branch reads is retried up to `retries` times, then a
// person is asked. Checked statically before use, like workflow definitions.
import { z } from "zod";
import type { CollaborationMode, ModeContext, ModeDecision, ModeState } from "./types";

const ZStepId = z.string().regex(/^[a-z][a-z0-9_-]*$/, "step ids are lower-case: letters, digits, _ and -");

export const ZSopConfig = z.strictObject({
  steps: z
    .array(
      z.strictObject({
        id: ZStepId,
        agent: z.string().min(1),
        instruction: z.string().trim().min(1).max(4000),
        branches: z
          .array(
            z.strictObject({ field: z.string().min(1), equals: z.union([z.string(), z.number(), z.boolean()]), goto: ZStepId.nullable() }),
          )
          .default([]),
        /** Where to go when no branch holds (default: the following step; null: the end). */
        next: ZStepId.nullable().optional(),
        maxVisits: z.number().int().min(1).max(20).default(3),
        retries: z.number().int().min(0).max(5).default(1),
      }),
    )
    .min(1, "an SOP needs at least one step"),
});
export type SopConfig = z.infer<typeof ZSopConfig>;
type SopStep = SopConfig["steps"][number];

/**
 * An SOP's own state: whether a run is on, its task so far (`opening`: the message that started
 * the run, the start of `task`), each step's visits, the attempt at the current step.
 */
export interface SopState {
  running: boolean;
  task: string;
  opening: string;
  visits: Record<string, number>;
  attempt: number;
}
/** What an SOP keeps (ModeState.custom): empty until its first run, a field not set yet has its default (sopOf). */
export type SopCustomState = Partial<SopState>;

function sopOf(state: ModeState<SopCustomState>): SopState {
  return { running: false, task: "", opening: "", visits: {}, attempt: 1, ...state.custom };
}

/** The step after `step` when no branch holds: `next`, else the following one, else the end. */
function fallthrough(config: SopConfig, step: SopStep): string | null {
  if (step.next !== undefined) return step.next;
  const i = config.steps.findIndex((s) => s.id === step.id);
  return config.steps[i + 1]?.id ?? null;
}

function targetsOf(config: SopConfig, step: SopStep): Array<string | null> {
  return [...step.branches.map((b) => b.goto), fallthrough(config, step)];
}

const ZReplyFields = z.record(z.string(), z.unknown());

/** The reply's JSON object (the whole reply or the first {...} in it), or null. */
function structured(text: string): Record<string, unknown> | null {
  for (const candidate of [text.trim(), /\{[\s\S]*\}/.exec(text)?.[0]]) {
    if (!candidate) continue;
    try {
      const fields = ZReplyFields.safeParse(JSON.parse(candidate));
      if (fields.success) return fields.data;
    } catch {
      // not this one
    }
  }
  return null;
}

const ordinal = (n: number) => `${n}${n % 100 >= 11 && n % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th")}`;

function enter(state: ModeState<SopCustomState>, sop: SopState, step: SopStep, attempt: number): ModeDecision<SopCustomState> {
  const visit = (sop.visits[step.id] ?? 0) + (attempt === 1 ? 1 : 0);
  if (visit > step.maxVisits) {
    const reason = `step ${step.id} would run for the ${ordinal(visit)} time (its loop cap is ${step.maxVisits})`;
    return {
      state: { ...state, currentStep: null, custom: { ...sop, running: false } },
      calls: [],
      notes: [{ kind: "needs_person", reason }],
    };
  }
  const next: SopState = { ...sop, running: true, visits: { ...sop.visits, [step.id]: visit }, attempt };
  const reads = [...new Set(step.branches.map((b) => b.field))];
  const format = reads.length ? `\n\nEnd your reply with a JSON object holding ${reads.map((f) => `"${f}"`).join(", ")}.` : "";
  // The task as the run's message put it first: the same for every step's call, it is sent before
  // the thread; what followed it (answers, a person's further messages) after the instruction
  // (docs/scaling.md, "Prompt economics"). A run from before `opening` was kept: the whole task first.
  const opening = sop.opening && sop.task.startsWith(sop.opening) ? sop.opening : sop.task;
  const task = `The task: ${opening}\n`;
  const since = sop.task.slice(opening.length).trim();
  return {
    state: { currentStep: step.id, stepHistory: [...state.stepHistory, step.id], custom: { ...next } },
    calls: [
      {
        agent: step.agent,
        prompt: `${task}\n${step.instruction}${since ? `\n\nSince then:\n${since}` : ""}${format}`,
        promptStableChars: task.length,
        caller: "person",
        metadata: { step: step.id, visit, attempt },
      },
    ],
    notes: [{ kind: "step", step: step.id, agent: step.agent, visit, attempt }],
  };
}

export const sop: CollaborationMode<SopConfig, SopCustomState, "sop"> = {
  name: "sop",
  description: "SOP: ordered steps with conditional branches, loops with a cap, and retries.",
  config: ZSopConfig,
  validate(config, ctx: ModeContext) {
    const problems: string[] = [];
    const ids = config.steps.map((s) => s.id);
    for (const [i, id] of ids.entries()) if (ids.indexOf(id) !== i) problems.push(`steps[${i}].id: "${id}" is used twice`);
    for (const [i, step] of config.steps.entries()) {
      if (!ctx.agents.some((a) => a.id === step.agent)) problems.push(`steps[${i}].agent: no agent "${step.agent}"`);
      for (const target of targetsOf(config, step))
        if (target !== null && !ids.includes(target)) problems.push(`steps[${i}]: goes to "${target}", which is no step`);
    }
    // Every step reachable from the first.
    const reached = new Set<string>([config.steps[0]!.id]);
    const queue = [config.steps[0]!];
    while (queue.length) {
      const step = queue.shift()!;
      for (const target of targetsOf(config, step)) {
        const to = config.steps.find((s) => s.id === target);
        if (to && !reached.has(to.id)) {
          reached.add(to.id);
          queue.push(to);
        }
      }
    }
    for (const [i, step] of config.steps.entries())
      if (!reached.has(step.id)) problems.push(`steps[${i}]: "${step.id}" is unreachable from the first step`);
    return problems;
  },
  initialize: () => ({ currentStep: null, stepHistory: [], custom: {} }),
  onUserMessage(state, config, message) {
    const current = sopOf(state);
    // A message while the procedure runs is context for its next call, not a new run.
    if (current.running)
      return { state: { ...state, custom: { ...current, task: `${current.task}\n\n${message.text}` } }, calls: [], notes: [] };
    const run = { running: true, task: message.text, opening: message.text, visits: {}, attempt: 1 };
    return enter({ ...state, stepHistory: [] }, run, config.steps[0]!, 1);
  },
  onAgentResponse(state, config, reply) {
    const current = sopOf(state);
    const step = config.steps.find((s) => s.id === state.currentStep);
    if (!current.running || !step || reply.agent !== step.agent) return { state, calls: [], notes: [] };
    const task = `${current.task}\n\n${step.id} (${step.agent}) answered:\n${reply.text}`;
    const fields = structured(reply.text);
    if (step.branches.length && !step.branches.some((b) => fields && b.field in fields)) {
      if (current.attempt <= step.retries) return enter(state, { ...current, task }, step, current.attempt + 1);
      const reason = `step ${step.id}: the reply has no ${step.branches.map((b) => `"${b.field}"`).join(" or ")} after ${current.attempt} attempt(s)`;
      return {
        state: { ...state, currentStep: null, custom: { ...current, running: false } },
        calls: [],
        notes: [{ kind: "needs_person", reason }],
      };
    }
    const branch = step.branches.find((b) => fields && fields[b.field] === b.equals);
    const target = branch ? branch.goto : fallthrough(config, step);
    const next = config.steps.find((s) => s.id === target);
    if (!next) {
      return {
        state: { ...state, currentStep: null, custom: { ...current, task, running: false } },
        calls: [],
        notes: [{ kind: "sop_completed", steps: state.stepHistory }],
      };
    }
    return enter(state, { ...current, task }, next, 1);
  },
};
