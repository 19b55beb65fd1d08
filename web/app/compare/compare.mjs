// Comparing two result documents (pure; no DOM): two configurations, two calibrations of the same
// model, before / after a fix. Every per-node table a document holds is a "source"; the two
// documents' values of one source and metric are matched by node (or item) name. Unmatched names are
// listed, never guessed. Metric directions come from the chart package's table (worseDirection),
// the one the heat scale uses; a toolchain report's own metrics carry the direction their format
// declares (web/pipeline/reports/). A report opened beside the model is a document of the same shape
// (web/pipeline/reports/document.mjs): its cosine per node is a node_errors table, so it pairs with
// ptqscope's node errors measured the same way (the Horizon log's with node errors measured as the
// converter does), and all its metrics are the source report:<format>.
import { toNumber } from '../../charts/format.mjs';
import { worseDirection } from '../../charts/heat_scale.mjs';

const EXTRA_COLUMNS = new Set(['node', 'threshold', 'qtype']);
const metricColumns = (rows) => {
  const cols = [];
  for (const row of Object.values(rows ?? {})) {
    for (const k of Object.keys(row ?? {})) if (!EXTRA_COLUMNS.has(k) && !cols.includes(k)) cols.push(k);
  }
  return cols;
};

/**
 * The per-node tables of a result document: [{id, label, metrics, values(metric) -> Map<name, number>,
 * order: [names], better?: {metric: 'higher'|'lower'}}] (order: the document's own order, graph order
 * where it has one; better: directions the table declares, for metrics the core does not know).
 *   sensitivity:<type>, leave_one_out:<type>  rows of the sweeps (item -> metric columns)
 *   what_if                                  what_if.nodes (accumulated error of the configuration)
 *   node_errors:accumulated, node_errors:own  node_errors.nodes[*].accumulated / .own (node_errors:converter:*
 *                                            when measured as the Horizon converter does, measure "converter")
 *   acc_error:<curve>                        a curve's y per compared tensor (x)
 *   report:<format>                          a toolchain report's metrics per node
 */
export function sourcesOf(doc) {
  const out = [];
  if (!doc || typeof doc !== 'object') return out;
  for (const section of ['sensitivity', 'leave_one_out']) {
    for (const [type, rows] of Object.entries(doc[section] ?? {})) {
      const order = doc[`${section}_order`]?.[type] ?? Object.keys(rows);
      out.push({
        id: `${section}:${type}`, label: `${section === 'leave_one_out' ? 'leave-one-out' : 'sensitivity'} (${type})`,
        metrics: metricColumns(rows), order,
        values: (m) => new Map(order.filter((k) => rows[k] && m in rows[k]).map((k) => [k, toNumber(rows[k][m])])),
      });
    }
  }
  const wi = doc.what_if;
  if (wi?.nodes && wi.metric) {
    const order = wi.order ?? Object.keys(wi.nodes);
    out.push({
      id: 'what_if', label: 'what-if: accumulated error', metrics: [wi.metric], order,
      values: (m) => (m === wi.metric ? new Map(order.filter((k) => k in wi.nodes).map((k) => [k, toNumber(wi.nodes[k])])) : new Map()),
    });
  }
  const ne = doc.node_errors;
  if (ne?.nodes && ne.metric) {
    const order = ne.order ?? Object.keys(ne.nodes);
    // Errors measured another way (measure "converter": the Horizon log's tensor and batch) are another
    // table, so that only like is compared with like.
    const measure = ne.measure ?? 'output';
    const as = measure === 'output' ? '' : `${measure}:`;
    for (const kind of ['accumulated', 'own']) {
      out.push({
        id: `node_errors:${as}${kind}`, label: `node errors: ${kind}${as ? ` (measured as the ${measure})` : ''}`, metrics: [ne.metric], order,
        values: (m) => (m === ne.metric
          ? new Map(order.filter((k) => ne.nodes[k] && kind in ne.nodes[k]).map((k) => [k, toNumber(ne.nodes[k][kind])]))
          : new Map()),
      });
    }
  }
  const rep = doc.report;
  if (rep?.nodes && Array.isArray(rep.metrics)) {
    const order = rep.order ?? Object.keys(rep.nodes);
    out.push({
      id: `report:${rep.format}`, label: `report: ${rep.label ?? rep.format}`, metrics: rep.metrics.map((m) => m.name), order,
      better: Object.fromEntries(rep.metrics.map((m) => [m.name, m.better])),
      values: (m) => new Map(order.filter((k) => rep.nodes[k] && m in rep.nodes[k]).map((k) => [k, toNumber(rep.nodes[k][m])])),
    });
  }
  const figures = doc.acc_error_figures ?? [];
  for (const [key, curve] of Object.entries(doc.acc_error ?? {})) {
    const metric = figures.find((f) => (f.curves ?? []).includes(key))?.metric ?? 'cosine-similarity';
    const x = curve.x ?? [];
    out.push({
      id: `acc_error:${key}`, label: `accumulated error: ${curve.label ?? key}`, metrics: [metric], order: x,
      values: (m) => (m === metric ? new Map(x.map((t, i) => [t, toNumber(curve.y?.[i])])) : new Map()),
    });
  }
  return out;
}

// Why the two documents' node errors do not pair: they were measured differently (node_errors' measure,
// e.g. a Horizon log against ptqscope's errors at node outputs); null when they pair or one has none.
export function measureMismatch(a, b) {
  const ma = a?.node_errors?.nodes ? a.node_errors.measure ?? 'output' : null;
  const mb = b?.node_errors?.nodes ? b.node_errors.measure ?? 'output' : null;
  if (!ma || !mb || ma === mb) return null;
  return `A's node errors are measured ${MEASURED[ma] ?? ma} and B's ${MEASURED[mb] ?? mb}: compute node errors measured the same way to compare them`;
}
const MEASURED = { output: 'at node outputs', converter: 'as the Horizon converter log measures them (the fake-quantized output, the batch flattened)' };

// The sources both documents have (by id), with the metrics both have.
export function commonSources(a, b) {
  const bs = new Map(sourcesOf(b).map((s) => [s.id, s]));
  return sourcesOf(a).filter((s) => bs.has(s.id)).map((s) => ({
    id: s.id, label: s.label, metrics: s.metrics.filter((m) => bs.get(s.id).metrics.includes(m)),
  })).filter((s) => s.metrics.length);
}

// The signed change of B against A, positive when B is worse (by the metric's direction; `better`:
// a declared direction, see sourcesOf).
export function worsening(metric, a, b, better) {
  const d = b - a;
  return worseDirection(metric, better) === 'higher' ? d : -d;
}

/**
 * compareDocuments(a, b, {source, metric}) -> {source, metric, direction, rows, onlyA, onlyB, order}
 * rows: [{name, a, b, delta (= b - a), worse (= delta signed so that > 0 is worse)}], sorted by |delta|
 * descending (NaN deltas last, then A's order); onlyA / onlyB: names in one document only (A's / B's
 * order); order: the matched names in A's order (for curves and paths).
 */
export function compareDocuments(a, b, { source, metric } = {}) {
  const sa = sourcesOf(a).find((s) => s.id === source);
  const sb = sourcesOf(b).find((s) => s.id === source);
  if (!sa || !sb) {
    const missing = [!sa && 'A', !sb && 'B'].filter(Boolean).join(' and ');
    throw new Error(`compare: result ${missing} has no '${source}' table`);
  }
  const m = metric ?? sa.metrics.find((x) => sb.metrics.includes(x));
  if (!m || !sa.metrics.includes(m) || !sb.metrics.includes(m)) throw new Error(`compare: both results need the metric '${metric}' in '${source}'`);
  const better = sa.better?.[m] ?? sb.better?.[m];
  const va = sa.values(m);
  const vb = sb.values(m);
  const order = [...va.keys()].filter((k) => vb.has(k));
  const rank = new Map(order.map((k, i) => [k, i]));
  const rows = order.map((name) => {
    const x = va.get(name);
    const y = vb.get(name);
    const delta = x === y ? 0 : y - x; // inf - inf is NaN: equal values are "no change"
    return { name, a: x, b: y, delta, worse: x === y ? 0 : worsening(m, x, y, better) };
  });
  rows.sort((r, s) => {
    const dr = Math.abs(r.delta);
    const ds = Math.abs(s.delta);
    if (Number.isNaN(dr) !== Number.isNaN(ds)) return Number.isNaN(dr) ? 1 : -1;
    return (ds - dr) || rank.get(r.name) - rank.get(s.name) || 0;
  });
  return {
    source, metric: m, direction: worseDirection(m, better) === 'higher' ? 'higher is worse' : 'lower is worse',
    ...(better ? { better } : {}), rows, order,
    onlyA: [...va.keys()].filter((k) => !vb.has(k)),
    onlyB: [...vb.keys()].filter((k) => !va.has(k)),
  };
}

// Both documents' values of the comparison along A's order, B's own-only names appended: a figure
// for renderAccError ({title, metric, curves: [{name, x, y}]}); a missing value is a gap ("nan").
export function compareFigure(a, b, cmp, { nameA = 'A', nameB = 'B' } = {}) {
  const sa = sourcesOf(a).find((s) => s.id === cmp.source).values(cmp.metric);
  const sb = sourcesOf(b).find((s) => s.id === cmp.source).values(cmp.metric);
  const x = [...sa.keys(), ...cmp.onlyB];
  const y = (m) => x.map((k) => (m.has(k) ? m.get(k) : 'nan'));
  return {
    title: `${cmp.source}: ${cmp.metric}`, metric: cmp.metric, average_mode: false,
    curves: [{ name: nameA, x, y: y(sa) }, { name: nameB, x, y: y(sb) }],
  };
}
