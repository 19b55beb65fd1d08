// dagre layout of the view model's boxes, shared by the layout worker and the tests (no DOM).
import dagre from '@dagrejs/dagre';

// dagre (network simplex) gives the nicest layout but takes seconds above ~1,500 boxes, and its
// ranking and ordering phases recurse once per level, which overflows a worker's stack on deep graphs.
// Larger or deeper graphs get layeredLayout below (linear passes, a third of a second for 3,300 boxes).
const LARGE = 1500;
const DEEP = 600;

// Longest-path levels in topological order (Kahn); nodes on a cycle, if any, go below the rest.
export function longestPathRanks(nodes, edges) {
  const out = new Map(nodes.map((n) => [n.id, []]));
  const indegree = new Map(nodes.map((n) => [n.id, 0]));
  for (const e of edges) {
    if (!out.has(e.from) || !indegree.has(e.to) || e.from === e.to) continue;
    out.get(e.from).push(e.to);
    indegree.set(e.to, indegree.get(e.to) + 1);
  }
  const rank = new Map();
  const queue = nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  for (const id of queue) rank.set(id, 0);
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i];
    for (const w of out.get(v)) {
      rank.set(w, Math.max(rank.get(w) ?? 0, rank.get(v) + 1));
      indegree.set(w, indegree.get(w) - 1);
      if (indegree.get(w) === 0) queue.push(w);
    }
  }
  const deepest = Math.max(0, ...rank.values());
  for (const n of nodes) if (!rank.has(n.id)) rank.set(n.id, deepest + 1);
  return rank;
}

// Math.max(...values) passes every value as an argument: 20,000+ of them overflow a worker's stack.
const maxOf = (values, init = -Infinity) => values.reduce((m, v) => (v > m ? v : m), init);

// Layered layout without recursion, for graphs too deep for dagre (its ordering phase recurses once
// per node along the longest path): longest-path ranks, a few barycenter sweeps to order each rank,
// ranks packed left to right and centred, edges as straight three-point polylines.
export function layeredLayout({ nodes, edges }, { nodesep = 20, ranksep = 30, margin = 20, sweeps = 4 } = {}) {
  const rank = longestPathRanks(nodes, edges);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const layers = [];
  for (const n of nodes) (layers[rank.get(n.id)] ??= []).push(n.id);
  const preds = new Map(nodes.map((n) => [n.id, []]));
  const succs = new Map(nodes.map((n) => [n.id, []]));
  for (const e of edges) {
    if (!byId.has(e.from) || !byId.has(e.to)) continue;
    succs.get(e.from).push(e.to);
    preds.get(e.to).push(e.from);
  }
  const pos = new Map(); // id -> index within its layer
  const index = () => layers.forEach((l) => l?.forEach((id, i) => pos.set(id, i)));
  index();
  for (let s = 0; s < sweeps; s++) {
    const down = s % 2 === 0;
    const order = down ? layers : [...layers].reverse();
    for (const layer of order) {
      if (!layer) continue;
      const key = new Map(layer.map((id) => {
        const ns = down ? preds.get(id) : succs.get(id);
        return [id, ns.length ? ns.reduce((a, v) => a + pos.get(v), 0) / ns.length : pos.get(id)];
      }));
      layer.sort((a, b) => key.get(a) - key.get(b));
      layer.forEach((id, i) => pos.set(id, i));
    }
  }
  const out = { nodes: {}, edges: [], width: 0, height: 0 };
  const widths = layers.map((l) => (l ?? []).reduce((a, id) => a + byId.get(id).width, 0) + nodesep * Math.max(0, (l?.length ?? 1) - 1));
  const maxWidth = maxOf(widths, 0);
  let y = margin;
  layers.forEach((layer, r) => {
    if (!layer) return;
    const h = Math.max(...layer.map((id) => byId.get(id).height));
    let x = margin + (maxWidth - widths[r]) / 2;
    for (const id of layer) {
      const n = byId.get(id);
      out.nodes[id] = { x: x + n.width / 2, y: y + h / 2 };
      x += n.width + nodesep;
    }
    y += h + ranksep;
  });
  out.width = maxWidth + 2 * margin;
  out.height = y - ranksep + margin;
  // Right edge of each rank, so that edges skipping ranks can pass beside them instead of through.
  const right = layers.map((l) => (l?.length ? Math.max(...l.map((id) => out.nodes[id].x + byId.get(id).width / 2)) : -Infinity));
  out.edges = edges.map((e) => {
    const a = out.nodes[e.from];
    const b = out.nodes[e.to];
    if (!a || !b) return null;
    const ya = a.y + byId.get(e.from).height / 2;
    const yb = b.y - byId.get(e.to).height / 2;
    const r0 = rank.get(e.from);
    const r1 = rank.get(e.to);
    if (r1 - r0 > 1 && r1 - r0 <= 64) {
      const x = Math.max(...right.slice(r0 + 1, r1)) + nodesep;
      return [{ x: a.x, y: ya }, { x, y: ya + ranksep / 2 }, { x, y: yb - ranksep / 2 }, { x: b.x, y: yb }];
    }
    return [{ x: a.x, y: ya }, { x: (a.x + b.x) / 2, y: (ya + yb) / 2 }, { x: b.x, y: yb }];
  });
  out.width = Math.max(out.width, maxOf(out.edges.flatMap((pts) => pts?.map((p) => p.x) ?? [0])) + margin);
  return out;
}

// input: { nodes: [{id, width, height}], edges: [{from, to, label?}] }
// output: { nodes: {id: {x, y}}, edges: [[{x, y}...] per input edge], width, height, engine }
export function layoutGraph(graph, options = {}) {
  const engine = options.engine ?? (graph.nodes.length > LARGE ||
    Math.max(0, ...longestPathRanks(graph.nodes, graph.edges).values()) > DEEP ? 'layered' : 'dagre');
  if (engine === 'layered') return { ...layeredLayout(graph), engine };
  try {
    return { ...dagreLayout(graph, options), engine: 'dagre' };
  } catch (err) {
    if (!(err instanceof RangeError)) throw err; // stack overflow: a very deep graph
    return { ...layeredLayout(graph), engine: 'layered' };
  }
}

function dagreLayout({ nodes, edges }, options) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({
    rankdir: 'TB', nodesep: 20, ranksep: 20, edgesep: 10, marginx: 20, marginy: 20,
    // The default acyclicer is a recursive DFS that overflows the stack on deep graphs (long chains).
    acyclicer: 'greedy',
    ranker: options.ranker ?? 'network-simplex',
  });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: n.width, height: n.height });
  edges.forEach((e, i) => {
    if (g.hasNode(e.from) && g.hasNode(e.to)) g.setEdge(e.from, e.to, { minlen: 1, weight: 1 }, String(i));
  });
  dagre.layout(g);
  const out = { nodes: {}, edges: [], width: g.graph().width ?? 0, height: g.graph().height ?? 0 };
  for (const id of g.nodes()) {
    const n = g.node(id);
    out.nodes[id] = { x: n.x, y: n.y };
  }
  out.edges = edges.map((e, i) => g.edge({ v: e.from, w: e.to, name: String(i) })?.points?.map((p) => ({ x: p.x, y: p.y })) ?? null);
  return out;
}
