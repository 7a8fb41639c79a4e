// The step kind registry's promises at composition and execution (server/runner/step-kinds.ts):
// one entry per kind, refused twice; the runner's executors by kind; an input that does not
// parse fails its step for good without running the executor (as internal_error, or as the
// kind says); a result its output schema refuses is not recorded as a completion.
// test/integration/step-kinds.int.test.ts runs the reactions on a real runner.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { StepExecutionError } from "../../server/runner/executors";
import { defineStepKind, stepKindRegistry, type StepKind } from "../../server/runner/step-kinds";
import { claimedStep } from "../helpers/steps";

const ZInput = z.object({ cat: z.string(), paws: z.number().int().default(4) });
const ZOutput = z.object({ count: z.number().int() });

/** A kind whose executor counts its runs and returns `result` (default: the input's paws). */
function pawKind(kind = "paw", result?: (input: z.infer<typeof ZInput>) => { count: number }) {
  const ran: unknown[] = [];
  const entry = defineStepKind({
    kind,
    input: ZInput,
    output: ZOutput,
    async execute(_step, input) {
      ran.push(input);
      return result ? result(input) : { count: input.paws };
    },
  });
  return { entry, ran };
}

const live = () => ({ signal: new AbortController().signal });

async function failure(p: Promise<unknown>): Promise<StepExecutionError> {
  const err = await p.then(
    (value) => new Error(`expected a StepExecutionError, got ${JSON.stringify(value)}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StepExecutionError);
  return err as StepExecutionError;
}

describe("composing the registry", () => {
  it("refuses a second entry of a kind, naming it; entries of different kinds compose", () => {
    const a = pawKind("paw").entry;
    const b = pawKind("paw").entry;
    expect(() => stepKindRegistry([a, b])).toThrow('step kind "paw" is registered twice: a kind has one entry');
    expect(() => stepKindRegistry([a, pawKind("tail").entry, a])).toThrow('step kind "paw" is registered twice');
    expect(stepKindRegistry([a, pawKind("tail").entry]).kinds).toEqual(["paw", "tail"]);
  });

  it("gives the runner one executor per kind, each its entry's", () => {
    const entries: StepKind[] = [pawKind("paw").entry, pawKind("tail").entry];
    const { executors } = stepKindRegistry(entries);
    expect(Object.keys(executors)).toEqual(["paw", "tail"]);
    expect(executors.paw).toBe(entries[0]!.execute);
    expect(executors.tail).toBe(entries[1]!.execute);
    expect(stepKindRegistry([]).executors).toEqual({});
  });
});

describe("executing an entry", () => {
  it("hands the executor the input as its schema parsed it, and returns the result its output schema parsed", async () => {
    const { entry, ran } = pawKind();
    expect(await entry.execute(claimedStep("paw", { cat: "tom" }), live())).toEqual({ count: 4 });
    expect(ran).toEqual([{ cat: "tom", paws: 4 }]);
  });

  it("an input that does not parse fails the step for good as internal_error, naming the step and every issue, and the executor never runs", async () => {
    const { entry, ran } = pawKind();
    const step = claimedStep("paw", { paws: "four" });
    const err = await failure(entry.execute(step, live()));
    expect({ errorClass: err.errorClass, retryable: err.retryable, message: err.message }).toEqual({
      errorClass: "internal_error",
      retryable: false,
      message: `step ${step.id} (paw) has no valid input: cat: Invalid input: expected string, received undefined; paws: Invalid input: expected number, received string`,
    });
    expect((await failure(entry.execute(claimedStep("paw", null), live()))).message).toMatch(
      /has no valid input: \(root\): Invalid input: expected object, received null$/,
    );
    expect(ran).toEqual([]);
  });

  it("a kind may say how its invalid input fails (its class and message), and it is still not retried", async () => {
    const ran: unknown[] = [];
    const entry = defineStepKind({
      kind: "meow",
      input: ZInput,
      output: ZOutput,
      invalidInput: { errorClass: "tool_error", message: (step, issues) => `no meow for ${step.kind}: ${issues}` },
      async execute(_step, input) {
        ran.push(input);
        return { count: 1 };
      },
    });
    const err = await failure(entry.execute(claimedStep("meow", {}), live()));
    expect({ errorClass: err.errorClass, retryable: err.retryable, message: err.message }).toEqual({
      errorClass: "tool_error",
      retryable: false,
      message: "no meow for meow: cat: Invalid input: expected string, received undefined",
    });
    expect(ran).toEqual([]);
  });

  it("a result its output schema refuses fails the step as internal_error, not retried: what is recorded is what its reaction can read", async () => {
    const { entry, ran } = pawKind("paw", (input) => ({ count: input.paws + 0.5 }));
    const step = claimedStep("paw", { cat: "tom" });
    const err = await failure(entry.execute(step, live()));
    expect({ errorClass: err.errorClass, retryable: err.retryable, message: err.message }).toEqual({
      errorClass: "internal_error",
      retryable: false,
      message: `step ${step.id} (paw) returned no valid output: count: Invalid input: expected int, received number`,
    });
    expect(ran).toHaveLength(1);
  });

  it("an executor's own failure passes through unchanged (its class, its retry)", async () => {
    const entry = defineStepKind({
      kind: "hiss",
      input: ZInput,
      output: ZOutput,
      async execute() {
        throw new StepExecutionError("provider_network_error", "the bowl is empty", true, 1_000);
      },
    });
    expect(await failure(entry.execute(claimedStep("hiss", { cat: "tom" }), live()))).toMatchObject({
      errorClass: "provider_network_error",
      message: "the bowl is empty",
      retryable: true,
      retryAfterMs: 1_000,
    });
  });
});
