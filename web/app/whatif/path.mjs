// Paths through the model's graph and where error starts along them (pure; no DOM).
// A path runs from a graph input to a graph output through the nodes that compute from it; the user
// routes it through nodes of their choice (the picked set), in graph order. Calibration nodes are
// passed through but not listed (their errors show on the nodes that consume them).
import { toNumber } from '../../charts/format.mjs';
import { worseDirection } from '../../charts/heat_scale.mjs';

// Node adjacency of the graph document (docs/graph-schema.md): successors by tensor consumers.
function successors(graph) {
  const byName = new Map(graph.nodes.map((n) => [n.name, n]));
  const next = new Map();
  for (const n of graph.nodes) {
    const out = new Set();
    for (const t of n.outputs ?? []) for (const c of graph.values?.[t]?.consumers ?? []) if (byName.has(c)) out.add(c);
    next.set(n.name, [...out]);
  }
  return next;
}

const valueName = (v) => (typeof v === 'string' ? v : v?.name);

// Shortest path (in nodes) from any of `fromNodes` to `to`, inclusive, or null.
function shortest(next, fromNodes, to) {
  const prev = new Map();
  const queue = [];
  for (const f of fromNodes) {
    if (!prev.has(f)) {
      prev.set(f, null);
      queue.push(f);
    }
  }
  for (let i = 0; i < queue.length; i++) {
    const cur = queue[i];
    if (cur === to) {
      const path = [];
      for (let k = cur; k !== null; k = prev.get(k)) path.push(k);
      return path.reverse();
    }
    for (const s of next.get(cur) ?? []) {
      if (!prev.has(s)) {
        prev.set(s, cur);
        queue.push(s);
      }
    }
  }
  return null;
}

/**
 * findPath(graph, {input, output, through}) -> [node names] (calibration nodes left out)
 * input: a graph input name; output: a graph output name; through: node names the path must visit
 * (sorted into graph order). Throws naming what cannot be reached.
 */
export function findPath(graph, { input, output, through = [] } = {}) {
  if (!graph) throw new Error('path: no model loaded');
  const inputs = (graph.inputs ?? []).map(valueName);
  const outputs = (graph.outputs ?? []).map(valueName);
  const inName = input ?? inputs[0];
  const outName = output ?? outputs[0];
  if (!inputs.includes(inName)) throw new Error(`path: '${inName}' is not an input of the model`);
  if (!outputs.includes(outName)) throw new Error(`path: '${outName}' is not an output of the model`);
  const next = successors(graph);
  const index = new Map(graph.nodes.map((n, i) => [n.name, i]));
  const vias = [...new Set(through)].filter((n) => index.has(n)).sort((a, b) => index.get(a) - index.get(b));
  const last = graph.values?.[outName]?.producer;
  if (!last) throw new Error(`path: output '${outName}' has no producing node`);
  const starts = graph.values?.[inName]?.consumers ?? [];
  let path = [];
  let from = starts;
  for (const stop of [...vias, last]) {
    const piece = shortest(next, from, stop);
    if (!piece) {
      const where = path.length ? path[path.length - 1] : `input '${inName}'`;
      throw new Error(`path: no path from ${where} to ${stop === last ? `output '${outName}'` : stop}`);
    }
    path = path.length ? [...path, ...piece.slice(1)] : piece;
    from = [stop];
  }
  const calibration = new Set(graph.nodes.filter((n) => n.calibration || n.op_type === 'HzCalibration').map((n) => n.name));
  return path.filter((n) => !calibration.has(n));
}

/**
 * The own / accumulated errors along a path from a node_errors section:
 * {metric, x: [node names with a value], own: [v], accumulated: [v]}.
 */
export function pathSeries(nodeErrors, path) {
  const nodes = nodeErrors?.nodes ?? {};
  const x = path.filter((n) => nodes[n]);
  return {
    metric: nodeErrors?.metric ?? null,
    x,
    own: x.map((n) => toNumber(nodes[n].own)),
    accumulated: x.map((n) => toNumber(nodes[n].accumulated)),
  };
}

// True when `value` is past `bound` on the metric's worse side (cosine below it, mse above it).
export function crosses(metric, value, bound) {
  const v = toNumber(value);
  if (Number.isNaN(v)) return false;
  return worseDirection(metric) === 'lower' ? v < bound : v > bound;
}

// The first node of `series.x` whose accumulated error crosses `bound`, or null.
export function firstCrossing(series, bound) {
  const i = series.accumulated.findIndex((v) => crosses(series.metric, v, bound));
  return i < 0 ? null : { node: series.x[i], index: i, value: series.accumulated[i] };
}
