// egress_overhead_ms: what an agent's way out adds to its start (docs/security.md "Network"):
// the run's egress proxy on its Unix socket and the bridge started first inside the sandbox
// (a Node process), against the same agent without network (the sandbox alone). A command
// agent running `true` through CommandAgent.invoke — the path every agent process takes
// (run directory, environment, sandbox, spawn, clean-up) — with `network: true` and without,
// alternating sample by sample so a load change lands on both alike; the overhead is the
// difference of the medians. Where bubblewrap is missing there is no egress to measure.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { CommandAgent } from "../../server/agents/command";
import { sandboxStatus } from "../../server/process/sandbox";
import type { Measurement } from "../lib/context";
import { percentiles, round, type LatencySummary } from "../lib/percentiles";
import { alternating } from "../lib/timing";

const PAIRS = 40;
const WARM_UP = 3;

type Mode = "egress" | "offline";

const agents: Record<Mode, CommandAgent> = {
  egress: new CommandAgent({ kind: "command", id: "bench-egress", argv: ["true"], prompt: "stdin", network: true }),
  offline: new CommandAgent({ kind: "command", id: "bench-offline", argv: ["true"], prompt: "stdin", network: false }),
};

async function once(workspace: string, mode: Mode): Promise<number> {
  const t = performance.now();
  const answer = await agents[mode].invoke({
    role: "coder",
    prompt: "",
    context: [],
    workspace,
    invocation: 0,
    signal: new AbortController().signal,
    deadline: Date.now() + 60_000,
  });
  const ms = performance.now() - t;
  if (!answer.sandboxed) throw new Error(`the ${mode} agent did not run in the sandbox`);
  return ms;
}

const brief = (s: LatencySummary) => ({ p50: s.p50, p95: s.p95, max: s.max, n: s.n });

export const egressOverhead: Measurement = {
  name: "egress_overhead",
  keys: ["egress_overhead_ms"],
  async run(ctx) {
    const status = sandboxStatus();
    if (!status.available) {
      const reason = status.reason ?? "unavailable";
      ctx.log(`egress_overhead: NO SANDBOX HERE: ${reason}; nothing to compare`);
      return { egress_overhead_ms: { unavailable: reason } };
    }
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-egress-"));
    try {
      const samples = await alternating(["egress", "offline"] as const, PAIRS, WARM_UP, (mode) => once(workspace, mode));
      const on = percentiles(samples.egress);
      const off = percentiles(samples.offline);
      ctx.note("egress_overhead", {
        measured:
          "CommandAgent.invoke of `true` with network (the run's egress proxy and the bridge inside the sandbox) vs without (the sandbox alone), alternating",
        pairs: PAIRS,
        egress: on,
        offline: off,
      });
      return {
        egress_overhead_ms: {
          overhead_p50: round(on.p50 - off.p50),
          overhead_p95: round(on.p95 - off.p95),
          egress: brief(on),
          offline: brief(off),
        },
      };
    } finally {
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  },
};
