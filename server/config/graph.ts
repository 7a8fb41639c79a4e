// Workflow definitions and execution FSMs as graphs for drawing (req M9): states with
// what they run, transitions with their trigger, guard and whether they start a new
// iteration. Pure: the same definition always gives the same graph.
import type { FsmDefinition } from "./schemas";
import { checkDefinition, type WorkflowDefinition } from "../workflow/definition";

export type GraphNodeKind = "wait" | "step" | "terminal" | "initial";

export interface GraphNode {
  id: string;
  kind: GraphNodeKind;
  description: string | null;
  /** step states: who runs and what they must produce. */
  role?: string;
  output?: string;
  phase?: string;
  /** terminal states: the session's outcome. */
  outcome?: string;
}

export interface GraphEdge {
  id: string;
  from: string;
  to: string;
  /** What fires it: a step output trigger, an operator command, or an FSM event. */
  trigger: string;
  guard?: string;
  iterate?: boolean;
  reason?: string;
  /** FSM transitions: the events announced on the way. */
  emit?: string[];
}

export interface WorkflowGraph {
  kind: "workflow" | "fsm";
  id: string;
  title: string;
  version: number | null;
  /** "builtin" or the project whose `.catcafe/runtimes.json` defines it. */
  source: string;
  modes: string[];
  initial: string;
  maxIterations: number | null;
  /** Transitions every non-terminal state takes (cancel, step_failed). */
  global: Array<{ trigger: string; to: string }>;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Static check results (empty for a definition that loaded). */
  problems: string[];
}

export function workflowGraph(def: WorkflowDefinition, source: string): WorkflowGraph {
  const nodes: GraphNode[] = Object.entries(def.states).map(([id, s]) => {
    const base = { id, description: s.description ?? null };
    if (s.type === "step") return { ...base, kind: "step", role: s.step.role, output: s.step.output, phase: s.step.phase };
    if (s.type === "terminal") return { ...base, kind: "terminal", outcome: s.outcome };
    return { ...base, kind: id === def.initial ? "initial" : "wait" };
  });
  const edges: GraphEdge[] = [];
  for (const [from, s] of Object.entries(def.states)) {
    if (s.type === "terminal") continue;
    for (const [trigger, transitions] of Object.entries(s.on)) {
      transitions.forEach((t, i) => {
        edges.push({
          id: `${from}:${trigger}:${i}`,
          from,
          to: t.target,
          trigger,
          ...(t.guard ? { guard: t.guard } : {}),
          ...(t.iterate ? { iterate: true } : {}),
          ...(t.reason ? { reason: t.reason } : {}),
        });
      });
    }
  }
  return {
    kind: "workflow",
    id: def.id,
    title: def.title,
    version: def.version,
    source,
    modes: def.modes,
    initial: def.initial,
    maxIterations: def.maxIterations,
    global: Object.entries(def.global).map(([trigger, to]) => ({ trigger, to })),
    nodes,
    edges,
    problems: checkDefinition(def).map((p) => `${p.path}: ${p.message}`),
  };
}

export function fsmGraph(id: string, fsm: FsmDefinition, source: string): WorkflowGraph {
  const nodes: GraphNode[] = Object.entries(fsm.states).map(([name, s]) => ({
    id: name,
    // An execution FSM's states in between are the run itself (EXECUTING): drawn as steps.
    kind: s.terminal ? "terminal" : name === fsm.initial ? "initial" : "step",
    description: s.description ?? null,
  }));
  const edges: GraphEdge[] = Object.entries(fsm.states).flatMap(([from, s]) =>
    Object.entries(s.on).map(([event, t]) => ({
      id: `${from}:${event}`,
      from,
      to: t.target,
      trigger: event,
      ...(t.emit.length ? { emit: t.emit } : {}),
    })),
  );
  return {
    kind: "fsm",
    id,
    title: fsm.description ?? id,
    version: null,
    source,
    modes: [],
    initial: fsm.initial,
    maxIterations: null,
    global: [],
    nodes,
    edges,
    problems: [],
  };
}
