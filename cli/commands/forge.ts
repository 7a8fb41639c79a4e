// `catcafe forge new | status | pass | feedback | edit | retry | guide | abort` (req F1,
// F2, F8, F10) and `resume | modify | revert` (./forks.ts): the Forge pipeline from the terminal, each a procedure of
// server/api/routers/forge.ts recorded with you as the actor.
import fs from "node:fs";
import type { Command } from "commander";
import type { RouterInputs } from "../../lib/client";
import { versionCredit } from "../../lib/credit";
import { usageLine } from "../../lib/usage";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { table } from "../output";
import { registerForgeHistoryCommands } from "./forks";
import { examples } from "./help";
import { resolveProject, textFrom } from "./tasks";

type Stage = NonNullable<RouterInputs["forge"]["new"]["gates"]>[number];
/** Every stage, in order: a record over the server's stage type, so the compiler keeps the two alike. */
const STAGE_SET: Record<Stage, true> = { idea: true, prd: true, design: true, plan: true, coding: true, check: true, delivery: true };
const STAGES = Object.keys(STAGE_SET).join(", ");

function isStage(name: string): name is Stage {
  return Object.hasOwn(STAGE_SET, name);
}

function list(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `--gates prd,plan` (or `none`) as the stages with a person's gate. */
export function gates(value: string): Stage[] {
  if (value === "none") return [];
  return list(value).map((name) => {
    if (!isStage(name)) throw new CliError(`--gates: "${name}" is not a stage (${STAGES}; or none)`, { code: "USAGE" });
    return name;
  });
}

function caps(value: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const pair of list(value)) {
    const [stage, n] = pair.split("=");
    const cap = Number(n);
    if (!stage || !Number.isInteger(cap))
      throw new CliError(`--caps takes stage=number pairs, e.g. prd=4,coding=3 (got "${pair}")`, { code: "USAGE" });
    out[stage] = cap;
  }
  return out;
}

export function registerForgeCommands(program: Command): void {
  const forge = program.command("forge").description("the Forge pipeline: an idea to delivery in seven stages, with your gates");

  forge
    .command("new")
    .description("start a pipeline from an idea (operator)")
    .argument("[idea...]", "the idea (or --file)")
    .option("-p, --project <id>", "project id (default: CATCAFE_PROJECT, or the only project)")
    .option("-f, --file <path>", "read the idea from a file (- for stdin)")
    .option("--title <title>", "the session's title")
    .option(
      "--gates <stages>",
      `stages with your gate, comma-separated (default: the project's, else idea,prd,design,plan); "none" for none`,
    )
    .option("--caps <pairs>", "iteration caps per stage, e.g. prd=4,coding=3")
    .option("--max-calls <n>", "budget: agent calls at most", (v) => Number(v))
    .option("--max-tokens <n>", "budget: tokens at most", (v) => Number(v))
    .addHelpText(
      "after",
      examples([
        'catcafe forge new --project demo "A command-line word counter with a unit test"',
        "catcafe forge new --project demo --file idea.md --gates prd --max-calls 30",
      ]),
    )
    .action(
      async (
        words: string[],
        options: { project?: string; file?: string; title?: string; gates?: string; caps?: string; maxCalls?: number; maxTokens?: number },
        command: Command,
      ) => {
        const ctx = CliContext.of(command);
        const client = ctx.client();
        const idea = (await textFrom(words, options.file, "idea")).trim();
        if (!idea) throw new CliError("say what the idea is (words, or --file)", { code: "USAGE" });
        const budget = {
          ...(options.maxCalls !== undefined ? { maxCalls: options.maxCalls } : {}),
          ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
        };
        const started = await client.forge.new.mutate({
          projectId: await resolveProject(client, options.project),
          idea,
          ...(options.title ? { title: options.title } : {}),
          ...(options.gates !== undefined ? { gates: gates(options.gates) } : {}),
          ...(options.caps ? { caps: caps(options.caps) } : {}),
          ...(Object.keys(budget).length ? { budget } : {}),
        });
        ctx.out.result(started, () => `Started Forge session ${started.sessionId}. Follow it: catcafe forge status ${started.sessionId}`);
      },
    );

  forge
    .command("status")
    .description("where a pipeline stands: each stage, its artifacts, and what waits for you")
    .argument("<session>", "session id")
    .action(async (sessionId: string, _options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const s = await ctx.client().forge.status.query({ sessionId });
      ctx.out.result(s, () => {
        const lines = [
          `${s.title} — ${s.status}${s.outcome ? ` (${s.outcome})` : ""}, in ${s.fsm}`,
          "",
          ...table(
            ["STAGE", "STATE", "ITERATION", "RUNS", "VERDICTS", "CALLS", "TOKENS"],
            s.stages.map((st) => [
              st.name,
              st.state,
              st.iteration ? `${st.iteration}/${st.cap}` : "—",
              String(st.runs),
              verdictsOf(st.verdicts),
              String(st.usage.calls),
              String(st.usage.inputTokens + st.usage.outputTokens),
            ]),
          ),
          "",
          `Usage: ${usageLine(s.usage, s.usage.currency)}`,
        ];
        if (s.artifacts.length) {
          lines.push(
            "",
            ...table(
              ["ARTIFACT", "STAGE", "VERSION", "BY", "HASH", "NOTES"],
              s.artifacts.map((a) => {
                const current = a.versions[a.number - 1];
                return [
                  a.path,
                  a.stage,
                  `v${a.number}`,
                  current ? versionCredit(current, s.names) : a.by,
                  a.hash.slice(0, 12),
                  [
                    a.immutable ? "frozen" : "",
                    a.problems.length ? `${a.problems.length} problem(s)` : "",
                    a.held ? "agent's version held" : "",
                  ]
                    .filter(Boolean)
                    .join(", "),
                ];
              }),
            ),
          );
        }
        if (s.needed) lines.push("", `STOPPED (${s.needed.cause}${s.needed.stage ? `, ${s.needed.stage}` : ""}): ${s.needed.message}`);
        if (s.waiting)
          lines.push(
            "",
            `Waiting for you at ${s.waiting.stage ?? s.fsm}: ${s.waiting.actions.join(", ")} (catcafe forge <action> ${s.sessionId})`,
          );
        return lines.join("\n");
      });
    });

  forge
    .command("pass")
    .description("pass the draft waiting at a gate on to the critic (or past a stop) (operator)")
    .argument("<session>", "session id")
    .action(async (sessionId: string, _options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const r = await ctx.client().forge.pass.mutate({ sessionId });
      ctx.out.result(r, () => `Passed: ${sessionId} goes on.`);
    });

  forge
    .command("feedback")
    .description("send the draft back to its actor with your feedback (operator)")
    .argument("<session>", "session id")
    .argument("[text...]", "the feedback (or --file)")
    .option("-f, --file <path>", "read it from a file (- for stdin)")
    .action(async (sessionId: string, words: string[], options: { file?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const text = (await textFrom(words, options.file, "feedback")).trim();
      const r = await ctx.client().forge.feedback.mutate({ sessionId, text });
      ctx.out.result(r, () => `Feedback recorded; the actor drafts again.`);
    });

  forge
    .command("edit")
    .description("replace an artifact of the stage waiting for you with a file's text; your text is kept through later drafts (operator)")
    .argument("<session>", "session id")
    .argument("<artifact>", "the artifact's path, e.g. .forge/prd.md")
    .requiredOption("-f, --file <path>", "the new text (- for stdin)")
    .action(async (sessionId: string, artifact: string, options: { file: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const client = ctx.client();
      const status = await client.forge.status.query({ sessionId });
      const current = status.artifacts.find((a) => a.path === artifact);
      const content = options.file === "-" ? await textFrom([], "-", "artifact") : readFile(options.file);
      const r = await client.forge.edit.mutate({ sessionId, path: artifact, content, baseHash: current?.hash ?? null });
      ctx.out.result(r, () => `Edited ${artifact} (${r.hash.slice(0, 12)}).`);
    });

  for (const [name, choice, description] of [
    ["retry", "retry", "after an agent failed beyond its retries: run the step again (operator)"],
    ["abort", "abort", "stop the pipeline: the session ends failed, its artifacts and the error kept (operator)"],
  ] as const) {
    forge
      .command(name)
      .description(description)
      .argument("<session>", "session id")
      .action(async (sessionId: string, _options: unknown, command: Command) => {
        const ctx = CliContext.of(command);
        const r = await ctx.client().forge.choose.mutate({ sessionId, choice });
        ctx.out.result(r, () => `${name === "retry" ? "Retrying" : "Aborted"}: ${sessionId}.`);
      });
  }

  forge
    .command("guide")
    .description("after an agent failed: retry with your guidance, recorded as critical feedback (operator)")
    .argument("<session>", "session id")
    .argument("[text...]", "the guidance (or --file)")
    .option("-f, --file <path>", "read it from a file (- for stdin)")
    .action(async (sessionId: string, words: string[], options: { file?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const text = (await textFrom(words, options.file, "guidance")).trim();
      const r = await ctx.client().forge.choose.mutate({ sessionId, choice: "guidance", text });
      ctx.out.result(r, () => `Guidance recorded; retrying.`);
    });

  registerForgeHistoryCommands(forge);
  forge.addHelpText("after", `\nStages: ${STAGES}.\n`);
}

function readFile(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** "2 pass · 1 revise", "—" when the stage had no critique. */
function verdictsOf(v: { pass: number; revise: number; escalate: number }): string {
  const parts = (["pass", "revise", "escalate"] as const).filter((k) => v[k] > 0).map((k) => `${v[k]} ${k}`);
  return parts.length ? parts.join(" · ") : "—";
}
