"use client";
// A workflow definition (or execution FSM) drawn as a state diagram with React Flow
// (@xyflow/react): states as cards coloured by kind (waiting, agent step, terminal
// outcome), transitions as arrows labelled with their trigger and guard, loops that start
// a new iteration as dashed amber arcs on the right, and the global cancel / step_failed
// transitions from an "any active state" marker. Positions come from workflow-layout.ts;
// the diagram can be panned and zoomed but not edited. Nothing is fetched.
import {
  BaseEdge,
  Controls,
  EdgeLabelRenderer,
  getBezierPath,
  getSmoothStepPath,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  type Edge,
  type EdgeProps,
  type Node,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useEffect, useMemo, useRef, useState } from "react";
import { stateTone, type StateTone } from "@/lib/state-tone";
import type { GraphEdge, GraphNode, WorkflowGraph } from "@/server/config/graph";
import { ANY_STATE_ID, layoutWorkflow, NODE_HEIGHT, NODE_WIDTH, type EdgeRoute, type PlacedNode } from "./workflow-layout";

type StateNodeData = { placed: PlacedNode["node"]; initial: boolean };
type StateNodeType = Node<StateNodeData, "state">;
type TransitionData = { edge: GraphEdge; route: EdgeRoute; lane: number; labelY?: number; color: string };
type TransitionEdgeType = Edge<TransitionData, "transition">;

const COLORS = {
  neutral: "#a1a1aa",
  iterate: "#f59e0b",
  success: "#10b981",
  failure: "#f43f5e",
  command: "#0ea5e9",
} as const;

const NODE_TONE: Record<StateTone | "any", string> = {
  active: "border-sky-300 bg-sky-50 dark:border-sky-700/70 dark:bg-sky-950/50",
  waiting: "border-amber-300 bg-amber-50 dark:border-amber-700/70 dark:bg-amber-950/40",
  success: "border-emerald-300 bg-emerald-50 dark:border-emerald-700/70 dark:bg-emerald-950/40",
  failure: "border-rose-300 bg-rose-50 dark:border-rose-700/70 dark:bg-rose-950/40",
  muted: "border-zinc-300 bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900",
  neutral: "border-violet-300 bg-violet-50 dark:border-violet-700/70 dark:bg-violet-950/40",
  any: "border-dashed border-zinc-300 bg-white/60 dark:border-zinc-600 dark:bg-zinc-900/40",
};

function nodeTone(node: StateNodeData["placed"]): StateTone | "any" {
  if (node.kind === "any") return "any";
  if (node.kind === "terminal") return stateTone((node as GraphNode).outcome ?? node.id);
  if (node.kind === "step") return "active";
  return "waiting";
}

/** The smallest zoom: the nodes' 12 px text never drawn under 12 px. */
const MIN_ZOOM = 1;

const hidden = "!size-1.5 !min-h-0 !min-w-0 !border-0 !bg-transparent";

function StateNode({ data }: NodeProps<StateNodeType>) {
  const n = data.placed;
  const tone = nodeTone(n);
  const graphNode = n.kind === "any" ? null : (n as GraphNode);
  return (
    <div
      className={`flex flex-col justify-center rounded-lg border px-2.5 shadow-sm ${NODE_TONE[tone]} ${data.initial ? "ring-2 ring-amber-400/60 ring-offset-1 ring-offset-white dark:ring-offset-zinc-950" : ""}`}
      style={{ width: NODE_WIDTH, height: NODE_HEIGHT }}
      title={n.description ?? undefined}
      data-testid="diagram-state"
      data-state={n.id}
    >
      <Handle type="target" position={Position.Top} id="t" className={hidden} isConnectable={false} />
      <Handle type="source" position={Position.Bottom} id="b" className={hidden} isConnectable={false} />
      <Handle type="source" position={Position.Right} id="rs" className={hidden} isConnectable={false} />
      <Handle type="target" position={Position.Right} id="rt" className={hidden} isConnectable={false} />
      <Handle type="source" position={Position.Left} id="ls" className={hidden} isConnectable={false} />
      <Handle type="target" position={Position.Left} id="lt" className={hidden} isConnectable={false} />
      <div className="flex items-center gap-1.5">
        <span className="truncate font-mono text-xs font-semibold text-zinc-900 dark:text-zinc-100">
          {n.kind === "any" ? "any active state" : n.id}
        </span>
        {data.initial || n.kind === "any" ? (
          <span className="ml-auto shrink-0 rounded bg-black/5 px-1 py-px font-mono text-xs tracking-wide text-zinc-600 uppercase dark:bg-white/10 dark:text-zinc-300">
            {data.initial ? "initial" : "global"}
          </span>
        ) : null}
      </div>
      <div className="truncate text-xs text-zinc-600 dark:text-zinc-400">
        {graphNode?.kind === "step" && graphNode.role ? (
          <>
            <span className="font-medium text-zinc-800 dark:text-zinc-200">{graphNode.role}</span> → {graphNode.output}
          </>
        ) : graphNode?.kind === "terminal" ? (
          <>outcome {graphNode.outcome ?? n.id}</>
        ) : n.kind === "any" ? (
          <>cancel · step_failed</>
        ) : (
          <>{n.description ?? "waits for a command"}</>
        )}
      </div>
    </div>
  );
}

/** An orthogonal path with rounded corners: out to x = `lane`, along it, and back in. */
function lanePath(sx: number, sy: number, tx: number, ty: number, lane: number): string {
  const r = Math.min(10, Math.abs(ty - sy) / 2, Math.abs(lane - sx), Math.abs(lane - tx));
  const dx1 = Math.sign(lane - sx) * r;
  const dy = Math.sign(ty - sy) * r;
  const dx2 = Math.sign(tx - lane) * r;
  return [
    `M ${sx},${sy}`,
    `H ${lane - dx1}`,
    `Q ${lane},${sy} ${lane},${sy + dy}`,
    `V ${ty - dy}`,
    `Q ${lane},${ty} ${lane + dx2},${ty}`,
    `H ${tx}`,
  ].join(" ");
}

function pathFor(p: EdgeProps<TransitionEdgeType>): { path: string; labelX: number; labelY: number } {
  const { sourceX: sx, sourceY: sy, targetX: tx, targetY: ty } = p;
  const route = p.data?.route ?? "down";
  const lane = p.data?.lane ?? sx;
  switch (route) {
    case "back":
    case "skip":
      // The label sits on the lane in a gap between layers (chosen by the layout).
      return { path: lanePath(sx, sy, tx, ty, lane), labelX: lane, labelY: p.data?.labelY ?? (sy + ty) / 2 };
    case "global-side":
    case "global-main":
      return { path: lanePath(sx, sy, tx, ty, lane), labelX: lane, labelY: p.data?.labelY ?? (sy + ty) / 2 };
    case "self":
      // A loop out of the right side and back; its label just above it, in the gap.
      return {
        path: `M ${sx},${sy - 10} C ${sx + 62},${sy - 42} ${sx + 62},${sy + 42} ${tx},${ty + 10}`,
        labelX: sx + 30,
        labelY: sy - NODE_HEIGHT / 2 - 12,
      };
    case "side": {
      const [path, labelX, labelY] = getSmoothStepPath({
        sourceX: sx,
        sourceY: sy,
        sourcePosition: p.sourcePosition,
        targetX: tx,
        targetY: ty,
        targetPosition: p.targetPosition,
        borderRadius: 10,
      });
      return { path, labelX, labelY };
    }
    default: {
      const [path, labelX, labelY] = getBezierPath({
        sourceX: sx,
        sourceY: sy,
        sourcePosition: p.sourcePosition,
        targetX: tx,
        targetY: ty,
        targetPosition: p.targetPosition,
      });
      return { path, labelX, labelY };
    }
  }
}

function TransitionEdge(props: EdgeProps<TransitionEdgeType>) {
  const { path, labelX, labelY } = pathFor(props);
  const edge = props.data?.edge;
  const color = props.data?.color ?? COLORS.neutral;
  const dashed = edge?.iterate || props.data?.route.startsWith("global");
  return (
    <>
      <BaseEdge
        id={props.id}
        path={path}
        markerEnd={props.markerEnd}
        style={{ stroke: color, strokeWidth: 1.4, strokeDasharray: dashed ? "5 4" : undefined }}
      />
      {edge ? (
        <EdgeLabelRenderer>
          <div
            className="nodrag nopan pointer-events-none absolute rounded border border-zinc-200 bg-white/95 px-1 py-px font-mono text-xs leading-tight whitespace-nowrap text-zinc-700 shadow-sm dark:border-zinc-700 dark:bg-zinc-900/95 dark:text-zinc-300"
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
          >
            {edge.trigger}
            {edge.guard ? <span className="text-zinc-500 dark:text-zinc-400"> [{edge.guard}]</span> : null}
            {edge.iterate ? <span className="text-amber-700 dark:text-amber-400"> ↻</span> : null}
            {edge.emit?.length ? (
              <span className="block text-center text-xs text-zinc-500 dark:text-zinc-400">emits {edge.emit.join(", ")}</span>
            ) : null}
          </div>
        </EdgeLabelRenderer>
      ) : null}
    </>
  );
}

const nodeTypes = { state: StateNode };
const edgeTypes = { transition: TransitionEdge };

function edgeColor(edge: GraphEdge, target: GraphNode | undefined): string {
  if (edge.iterate) return COLORS.iterate;
  if (edge.from === ANY_STATE_ID) return COLORS.failure;
  if (target?.kind === "terminal") {
    const tone = stateTone(target.outcome ?? target.id);
    return tone === "success" ? COLORS.success : tone === "failure" ? COLORS.failure : COLORS.neutral;
  }
  if (edge.trigger === "confirm" || edge.trigger === "start") return COLORS.command;
  return COLORS.neutral;
}

const HANDLES: Record<EdgeRoute, [string, string]> = {
  down: ["b", "t"],
  skip: ["ls", "lt"],
  back: ["rs", "rt"],
  self: ["rs", "rt"],
  side: ["rs", "lt"],
  "global-side": ["ls", "lt"],
  "global-main": ["ls", "rt"],
};

export function WorkflowDiagram({ graph }: { graph: WorkflowGraph }) {
  const { nodes, edges, bounds, start } = useMemo(() => {
    const layout = layoutWorkflow(graph);
    const byId = new Map(graph.nodes.map((n) => [n.id, n]));
    const positions = new Map(layout.nodes.map((p) => [p.node.id, p]));
    const nodes: StateNodeType[] = layout.nodes.map((p) => ({
      id: p.node.id,
      type: "state",
      position: { x: p.x, y: p.y },
      data: { placed: p.node, initial: p.node.id === graph.initial },
      width: NODE_WIDTH,
      height: NODE_HEIGHT,
      draggable: false,
      selectable: false,
      connectable: false,
    }));
    const edges: TransitionEdgeType[] = layout.edges.map(({ edge, route, side, lane, labelY }) => {
      let [sourceHandle, targetHandle] = HANDLES[route];
      if (route === "side" && (positions.get(edge.to)?.x ?? 0) < (positions.get(edge.from)?.x ?? 0))
        [sourceHandle, targetHandle] = ["ls", "rt"];
      if (route === "back" || route === "skip") [sourceHandle, targetHandle] = side === "right" ? ["rs", "rt"] : ["ls", "lt"];
      const color = edgeColor(edge, byId.get(edge.to));
      return {
        id: edge.id,
        source: edge.from,
        target: edge.to,
        sourceHandle,
        targetHandle,
        type: "transition",
        data: { edge, route, lane, labelY, color },
        markerEnd: { type: MarkerType.ArrowClosed, width: 14, height: 14, color },
        selectable: false,
        focusable: false,
      };
    });
    // Where a narrow view opens: on the initial state, at the top.
    const start = layout.nodes.find((p) => p.node.id === graph.initial) ?? layout.nodes[0];
    return { nodes, edges, bounds: layout, start: start ? { x: start.x + NODE_WIDTH / 2, y: start.y } : { x: 0, y: 0 } };
  }, [graph]);
  const height = bounds.height;

  // React Flow follows the system colour scheme, which only the browser knows: draw it
  // after mounting so the server's HTML and the first client render agree.
  // Never drawn smaller than MIN_ZOOM (its 12 px text stays readable): when the
  // whole diagram does not fit the width at that zoom, it opens at the top at MIN_ZOOM and is
  // panned by dragging or with the controls.
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState<number | null>(null);
  useEffect(() => setWidth(box.current?.clientWidth ?? null), []);
  const mounted = width !== null;
  // Tall enough for the whole drawing at MIN_ZOOM (the page scrolls, not the diagram), within reason.
  const boxHeight = Math.min(1400, Math.max(300, height * MIN_ZOOM + 80));
  const fits = width !== null && (bounds.width + 40) * MIN_ZOOM <= width && height * MIN_ZOOM + 40 <= boxHeight;

  return (
    <div ref={box} className="w-full" style={{ height: boxHeight }} data-testid="workflow-diagram" data-workflow={graph.id}>
      {mounted ? (
        <ReactFlow
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          edgeTypes={edgeTypes}
          colorMode="system"
          fitView={fits}
          fitViewOptions={{ padding: 0.06, minZoom: MIN_ZOOM, maxZoom: 1.1 }}
          defaultViewport={fits ? undefined : { x: (width ?? 0) / 2 - start.x * MIN_ZOOM, y: 16 - start.y * MIN_ZOOM, zoom: MIN_ZOOM }}
          minZoom={MIN_ZOOM}
          maxZoom={1.8}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          zoomOnScroll={false}
          preventScrolling={false}
          panOnDrag
          style={{ backgroundColor: "transparent" }}
        >
          <Controls showInteractive={false} position="bottom-left" />
        </ReactFlow>
      ) : null}
    </div>
  );
}
