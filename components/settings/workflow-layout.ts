// A small layered (Sugiyama-style) layout for workflow diagrams, top to bottom: break
// cycles with a depth-first search from the initial state (loops become "back" edges),
// put each state one layer below its deepest predecessor, order each layer by the mean
// position of its neighbours (a few sweeps down and up), then centre the layers. States
// reached only through the global transitions (cancel, step_failed) sit in a side column
// beside an "any active state" marker. Pure and deterministic.
import type { GraphEdge, GraphNode, WorkflowGraph } from "@/server/config/graph";

export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 54;
const GAP_X = 44;
const GAP_Y = 46;
const SIDE_GAP = 90;
const LANE_GAP = 26;
const SWEEPS = 6;

export const ANY_STATE_ID = "__any_state__";

export type EdgeRoute = "down" | "skip" | "back" | "side" | "self" | "global-side" | "global-main";

export interface PlacedNode {
  node: GraphNode | { id: typeof ANY_STATE_ID; kind: "any"; description: string };
  x: number;
  y: number;
  layer: number;
}

export interface PlacedEdge {
  edge: GraphEdge;
  route: EdgeRoute;
  /** Loops and skips run beside the layers they span: which side, and at which x. */
  side: "left" | "right";
  lane: number;
  /** Where a lane edge's label goes (flow y): a gap between layers no other label uses. */
  labelY?: number;
}

/** About how wide a transition label is drawn (monospace 9.5px). */
export function labelWidth(edge: GraphEdge): number {
  const text = `${edge.trigger}${edge.guard ? ` [${edge.guard}]` : ""}${edge.iterate ? " ↻" : ""}`;
  const emits = edge.emit?.length ? `emits ${edge.emit.join(", ")}` : "";
  return Math.max(text.length, emits.length) * 5.8 + 12;
}

export interface DiagramLayout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  /** The leftmost x drawn (node or edge label); the drawing spans minX … minX + width. */
  minX: number;
  width: number;
  height: number;
}

export function layoutWorkflow(graph: WorkflowGraph): DiagramLayout {
  const ids = graph.nodes.map((n) => n.id);
  const outgoing = new Map<string, GraphEdge[]>(ids.map((id) => [id, []]));
  const incoming = new Map<string, number>(ids.map((id) => [id, 0]));
  for (const e of graph.edges) {
    if (!outgoing.has(e.from) || !outgoing.has(e.to)) continue;
    outgoing.get(e.from)!.push(e);
    if (e.from !== e.to) incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
  }
  const globalTargets = new Set(graph.global.map((g) => g.to));
  // Only reached through cancel / step_failed: placed in the side column.
  const side = ids.filter(
    (id) => globalTargets.has(id) && (incoming.get(id) ?? 0) === 0 && (outgoing.get(id)?.length ?? 0) === 0 && id !== graph.initial,
  );
  const main = ids.filter((id) => !side.includes(id));

  // 1. Cycle breaking: depth-first from the initial state, then from anything unvisited.
  const back = new Set<string>();
  const state = new Map<string, "open" | "done">();
  const discovery: string[] = [];
  const visit = (id: string) => {
    state.set(id, "open");
    discovery.push(id);
    for (const e of outgoing.get(id) ?? []) {
      if (e.from === e.to) continue;
      const s = state.get(e.to);
      if (s === "open") back.add(e.id);
      else if (s === undefined) visit(e.to);
    }
    state.set(id, "done");
  };
  if (main.includes(graph.initial)) visit(graph.initial);
  for (const id of main) if (!state.has(id)) visit(id);

  // 2. Layers: longest path over the forward edges.
  const layer = new Map<string, number>(main.map((id) => [id, 0]));
  for (let changed = true, guard = 0; changed && guard < main.length + 1; guard++) {
    changed = false;
    for (const e of graph.edges) {
      if (back.has(e.id) || e.from === e.to || !layer.has(e.from) || !layer.has(e.to)) continue;
      const want = layer.get(e.from)! + 1;
      if (want > layer.get(e.to)!) {
        layer.set(e.to, want);
        changed = true;
      }
    }
  }
  const depth = Math.max(0, ...layer.values());
  const layers: string[][] = Array.from({ length: depth + 1 }, () => []);
  for (const id of discovery) if (layer.has(id)) layers[layer.get(id)!]!.push(id);

  // 3. Order within layers by the barycentre of neighbours in the adjacent layer.
  const neighbours = (id: string, direction: "up" | "down") =>
    graph.edges
      .filter((e) => !back.has(e.id) && e.from !== e.to)
      .flatMap((e) => (direction === "up" ? (e.to === id ? [e.from] : []) : e.from === id ? [e.to] : []))
      .filter((n) => layer.has(n));
  const index = () => new Map(layers.flatMap((l) => l.map((id, i) => [id, i - (l.length - 1) / 2] as const)));
  for (let sweep = 0; sweep < SWEEPS; sweep++) {
    const down = sweep % 2 === 0;
    const pos = index();
    const order = down ? layers.slice(1) : layers.slice(0, -1).reverse();
    for (const l of order) {
      const key = new Map(
        l.map((id, i) => {
          const ns = neighbours(id, down ? "up" : "down");
          return [id, ns.length ? ns.reduce((s, n) => s + (pos.get(n) ?? 0), 0) / ns.length : i - (l.length - 1) / 2] as const;
        }),
      );
      l.sort((a, b) => key.get(a)! - key.get(b)!);
    }
  }

  // 4. Coordinates: layers centred on x = 0.
  const placed: PlacedNode[] = [];
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  let minX = Infinity;
  let maxX = -Infinity;
  layers.forEach((l, li) => {
    const width = l.length * NODE_WIDTH + (l.length - 1) * GAP_X;
    l.forEach((id, i) => {
      const x = -width / 2 + i * (NODE_WIDTH + GAP_X);
      placed.push({ node: byId.get(id)!, x, y: li * (NODE_HEIGHT + GAP_Y), layer: li });
      minX = Math.min(minX, x);
      maxX = Math.max(maxX, x + NODE_WIDTH);
    });
  });

  // 5. Edges. Loops (back edges) and edges that skip layers run in a lane beside the
  // layers they span, so they never cross the states in between: on the side where their
  // source is outermost in its layer (loops prefer the right, skips the left). Shorter
  // spans take the inner lanes.
  const layerOf = (id: string) => layers[layer.get(id) ?? 0] ?? [];
  const extent = (a: number, b: number, sideName: "left" | "right") => {
    const xs = placed
      .filter((p) => p.layer >= Math.min(a, b) && p.layer <= Math.max(a, b))
      .map((p) => (sideName === "right" ? p.x + NODE_WIDTH : p.x));
    return sideName === "right" ? Math.max(...xs) : Math.min(...xs);
  };
  const edges: PlacedEdge[] = [];
  const laned: Array<{ edge: GraphEdge; route: "back" | "skip"; span: number; from: number; to: number }> = [];
  for (const e of graph.edges) {
    const from = layer.get(e.from);
    const to = layer.get(e.to);
    if (e.from === e.to) edges.push({ edge: e, route: "self", side: "right", lane: 0 });
    else if (from === undefined || to === undefined) edges.push({ edge: e, route: "down", side: "right", lane: 0 });
    else if (back.has(e.id) || to < from) laned.push({ edge: e, route: "back", span: from - to, from, to });
    else if (to === from) edges.push({ edge: e, route: "side", side: "right", lane: 0 });
    else if (to - from > 1) laned.push({ edge: e, route: "skip", span: to - from, from, to });
    else edges.push({ edge: e, route: "down", side: "right", lane: 0 });
  }
  const lanes = { left: 0, right: 0 };
  const labels: Array<{ x: number; y: number; width: number }> = [];
  // A self-loop is drawn just right of its state: right lanes start beyond it.
  if (edges.some((e) => e.route === "self")) lanes.right = 1;
  const outermost = (id: string, sideName: "left" | "right") => {
    const row = layerOf(id);
    return (sideName === "right" ? row.at(-1) : row[0]) === id;
  };
  for (const l of laned.sort((a, b) => a.span - b.span)) {
    // A side where the edge leaves and enters without passing a neighbour in the layer.
    const preferred: "left" | "right" = l.route === "back" ? "right" : "left";
    const other = preferred === "right" ? "left" : "right";
    const clear = (sideName: "left" | "right") => outermost(l.edge.from, sideName) && outermost(l.edge.to, sideName);
    const sideName: "left" | "right" = clear(preferred)
      ? preferred
      : clear(other)
        ? other
        : outermost(l.edge.to, preferred)
          ? preferred
          : outermost(l.edge.to, other)
            ? other
            : preferred;
    const offset = LANE_GAP * (1 + lanes[sideName]++);
    const lane = sideName === "right" ? extent(l.from, l.to, "right") + offset : extent(l.from, l.to, "left") - offset;
    // The label: in the first gap between layers along the lane that no earlier label uses.
    const dir = Math.sign(l.to - l.from);
    const srcMid = (layer.get(l.edge.from) ?? 0) * (NODE_HEIGHT + GAP_Y) + NODE_HEIGHT / 2;
    const width = labelWidth(l.edge);
    // Each gap holds up to three labels one above the other.
    const candidates = Array.from(
      { length: l.span },
      (_, k) => srcMid + dir * (NODE_HEIGHT / 2 + GAP_Y / 2 + k * (NODE_HEIGHT + GAP_Y)),
    ).flatMap((y) => [y, y - 13, y + 13]);
    const free = (y: number) => labels.every((b) => Math.abs(b.y - y) >= 13 || Math.abs(b.x - lane) >= (b.width + width) / 2 + 4);
    const labelY = candidates.find(free) ?? candidates[0]!;
    labels.push({ x: lane, y: labelY, width });
    edges.push({ edge: l.edge, route: l.route, side: sideName, lane, labelY });
    minX = Math.min(minX, lane - width / 2);
    maxX = Math.max(maxX, lane + width / 2);
  }

  // 6. The side column: "any active state" and what the global transitions lead to.
  if (graph.global.length) {
    const sideX = maxX + SIDE_GAP;
    const top = Math.max(0, Math.round(depth / 2 - side.length / 2)) * (NODE_HEIGHT + GAP_Y);
    placed.push({ node: { id: ANY_STATE_ID, kind: "any", description: "any state that is not terminal" }, x: sideX, y: top, layer: -1 });
    side.forEach((id, i) => placed.push({ node: byId.get(id)!, x: sideX, y: top + (i + 1) * (NODE_HEIGHT + GAP_Y), layer: -1 }));
    const yOf = new Map(placed.map((p) => [p.node.id, p.y]));
    graph.global.forEach((g, i) => {
      const onSide = side.includes(g.to);
      const edge: GraphEdge = { id: `global:${g.trigger}`, from: ANY_STATE_ID, to: g.to, trigger: g.trigger };
      const lane = sideX - LANE_GAP * (1 + i);
      // The label in a gap between rows along the lane (rows line up with the layers).
      const a = top + NODE_HEIGHT / 2;
      const b = (yOf.get(g.to) ?? top) + NODE_HEIGHT / 2;
      const row = NODE_HEIGHT + GAP_Y;
      const gaps: number[] = [];
      for (let k = 1; k * row - GAP_Y / 2 < Math.max(a, b) + row; k++) {
        const y = k * row - GAP_Y / 2;
        if (y > Math.min(a, b) && y < Math.max(a, b)) gaps.push(y);
      }
      const width = labelWidth(edge);
      const candidates = (gaps.length ? gaps : [(a + b) / 2]).flatMap((y) => [y, y - 13, y + 13]);
      const free = (y: number) => labels.every((l) => Math.abs(l.y - y) >= 13 || Math.abs(l.x - lane) >= (l.width + width) / 2 + 4);
      const labelY = candidates.find(free) ?? candidates[0]!;
      labels.push({ x: lane, y: labelY, width });
      edges.push({ edge, route: onSide ? "global-side" : "global-main", side: "left", lane, labelY });
    });
    maxX = sideX + NODE_WIDTH;
  }
  const maxY = Math.max(...placed.map((p) => p.y)) + NODE_HEIGHT;
  return { nodes: placed, edges, minX, width: maxX - minX, height: maxY };
}
