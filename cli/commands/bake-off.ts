// `catcafe bake-off show | judge | pick | dismiss` (docs/bake-off.md): a bake-off's contenders side
// by side, its judge asked, its winner picked (delivered by the project's settings; the others
// end not_chosen), or the bake-off dismissed. Started with `catcafe task start --bake-off …`.
import type { Command } from "commander";
import { CliContext } from "../context";
import { examples } from "./help";

export function registerBakeOffCommands(program: Command): void {
  const bakeOff = program.command("bake-off").description("compare a bake-off's contenders, ask the judge, pick the winner");

  bakeOff
    .command("show")
    .description("a bake-off's contenders (coder, session, state, outcome), the judge's advice and the choice")
    .argument("<session>", "the bake-off's session id (s-…)")
    .addHelpText("after", examples(["catcafe bake-off show s-1a2b3c4d5e6f", "catcafe bake-off show s-1a2b3c4d5e6f --json"]))
    .action(async (sessionId: string, _options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const view = await ctx.client().bakeOffs.get.query({ sessionId });
      ctx.out.result(view, () => [
        `Bake-off ${sessionId} (${view.state}${view.outcome ? `, ${view.outcome}` : ""})`,
        ...view.contenders.map(
          (c) =>
            `  ${c.id}  ${c.label.padEnd(24)} ${c.sessionId ?? "(not forked yet)"}  ${c.finalOutcome ?? c.state ?? ""}${c.outcome && c.outcome !== c.finalOutcome ? ` (ended ${c.outcome})` : ""}`,
        ),
        ...(view.judge.recommendation
          ? [
              `Judge ${view.judge.recommendation.agent}: ${view.judge.recommendation.winner} (${view.judge.recommendation.ranking.join(" > ")})`,
            ]
          : []),
        ...(view.choice
          ? [`Chosen: ${view.choice.contenderId} by ${view.choice.by}${view.choice.reason ? ` — ${view.choice.reason}` : ""}`]
          : []),
      ]);
    });

  bakeOff
    .command("judge")
    .description("ask the judge agent (the reviewer by default) for a recommendation once every contender has ended (operator)")
    .argument("<session>", "the bake-off's session id (s-…)")
    .option("--judge <agent>", "another agent of the session or the project to judge with")
    .addHelpText("after", examples(["catcafe bake-off judge s-1a2b3c4d5e6f", "catcafe bake-off judge s-1a2b3c4d5e6f --judge reviewer-gpt"]))
    .action(async (sessionId: string, options: { judge?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const asked = await ctx.client().bakeOffs.judge.mutate({ sessionId, ...(options.judge ? { judge: options.judge } : {}) });
      ctx.out.result(asked, () => `The judge ${asked.agentId} was asked; see its advice with: catcafe bake-off show ${sessionId}`);
    });

  bakeOff
    .command("pick")
    .description("pick the winner: delivered by the project's delivery settings; the other contenders end not_chosen (operator)")
    .argument("<session>", "the bake-off's session id (s-…)")
    .argument("<contender>", "the winner: c1 … c6")
    .option("--reason <text>", "why this one")
    .addHelpText("after", examples(['catcafe bake-off pick s-1a2b3c4d5e6f c2 --reason "smallest diff, all tests pass"']))
    .action(async (sessionId: string, contenderId: string, options: { reason?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const picked = await ctx
        .client()
        .bakeOffs.pick.mutate({ sessionId, contenderId, ...(options.reason ? { reason: options.reason } : {}) });
      ctx.out.result(picked, () => [
        `Picked ${picked.contenderId} (${picked.winnerSessionId}); not chosen: ${picked.notChosen.join(", ") || "none"}.`,
        picked.delivery
          ? `Delivery asked (${picked.delivery.method} of ${picked.delivery.branch}); a runner carries it out.`
          : `Not delivered: ${picked.deliveryProblem ?? "nothing to deliver"} (deliver it with: catcafe deliver ${picked.winnerSessionId})`,
      ]);
    });

  bakeOff
    .command("dismiss")
    .description("end the bake-off with no winner: every contender not_chosen, those still running stopped (operator)")
    .argument("<session>", "the bake-off's session id (s-…)")
    .option("--reason <text>", "why")
    .addHelpText("after", examples(['catcafe bake-off dismiss s-1a2b3c4d5e6f --reason "none is good enough"']))
    .action(async (sessionId: string, options: { reason?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const result = await ctx.client().bakeOffs.dismiss.mutate({ sessionId, ...(options.reason ? { reason: options.reason } : {}) });
      ctx.out.result(result, () => `Dismissed ${sessionId}: ${result.notChosen.join(", ")} not chosen.`);
    });
}
