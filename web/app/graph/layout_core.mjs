// dagre layout of the view model's boxes, shared by the layout worker and the tests (no DOM).
import dagre from '@dagrejs/dagre';

// Above this many nodes the network-simplex ranker takes too long; longest-path is linear
// (Netron switches at the same size).
const LARGE = 3000;

// input: { nodes: [{id, width, height}], edges: [{from, to, label?}] }
// output: { nodes: {id: {x, y}}, edges: [[{x, y}...] per input edge], width, height }
export function layoutGraph({ nodes, edges }, options = {}) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({
    rankdir: 'TB', nodesep: 20, ranksep: 20, edgesep: 10, marginx: 20, marginy: 20,
    ranker: options.ranker ?? (nodes.length > LARGE ? 'longest-path' : 'network-simplex'),
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
