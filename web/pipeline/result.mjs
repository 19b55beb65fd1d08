// What every face (CLI, page, plugin, report) does with a result document (docs/result-schema.md):
// read its numbers, walk its maps in the core's order, put documents of several analyses together,
// and list the charts it holds. Environment-neutral and pure; the charts and tables are drawn
// elsewhere (web/charts) from what this module hands them.

const NON_FINITE = { inf: Infinity, '+inf': Infinity, '-inf': -Infinity, nan: NaN };

// A schema number (a number, or the strings "inf" / "-inf" / "nan" the schema writes non-finite
// values as) as a JS number; null, undefined and other strings -> NaN.
export function toNumber(v) {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const key = v.trim().toLowerCase();
    if (key in NON_FINITE) return NON_FINITE[key];
    const n = Number(key);
    return key !== '' && !Number.isNaN(n) ? n : NaN;
  }
  return NaN;
}

// Whether `v` is one of the schema's non-finite strings.
export const isNonFiniteText = (v) => typeof v === 'string' && v.trim().toLowerCase() in NON_FINITE;

// A name or a list as the analyses take list options: a bare name -> [name]; null stays null.
export function asList(value) {
  if (value === null || value === undefined) return null;
  return Array.isArray(value) ? value : [value];
}

// A chart or item name as a file name that every file system takes, Windows' too (a zip of charts
// unpacked there, a CLI folder copied there): '/' and '\' become '_' as the original's '/' -> '_', and
// so do the other characters Windows refuses in a name (< > : " | ? * and control characters: torch's
// tensor names hold '::'), a trailing dot or space (Windows drops them); a name Windows keeps for a
// device (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension) gets a '_' in front.
export function safeName(name) {
  const s = String(name).replace(/[<>:"/\\|?*\x00-\x1f]/g, '_').replace(/[. ]+$/, (end) => '_'.repeat(end.length));
  return /^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\.|$)/i.test(s) ? `_${s}` : s;
}

// The keys of a result map in the core's order: `order` (a `<section>_order` list; JS objects put
// integer-like keys first, so the list carries the order) filtered to the keys the map holds, then
// any key it does not name, in the map's own order.
export function orderedKeys(map, order) {
  const keys = Object.keys(map ?? {});
  if (!order) return keys;
  const named = new Set(order);
  return [...order.filter((k) => Object.hasOwn(map ?? {}, k)), ...keys.filter((k) => !named.has(k))];
}

// [[item, row], ...] of a sensitivity table in the core's ranking.
export const orderedRows = (table, order) => orderedKeys(table, order).map((k) => [k, table[k]]);

// Documents of several analyses (runall's stages, or several requests) as one document: sections of
// different analyses side by side; maps both hold (`sensitivity` keyed by node type, `options`,
// `timings_ms`, `model`) merged one level; `cancelled` if any was; the split bookkeeping `sweep`
// left out (it describes one request).
export function combineDocuments(docs) {
  const out = {};
  for (const doc of docs) {
    for (const [k, v] of Object.entries(doc)) {
      if (k === 'sweep') continue;
      const both = isPlainObject(out[k]) && isPlainObject(v);
      if (k === 'cancelled') out[k] = Boolean(out[k] || v);
      else out[k] = both ? { ...out[k], ...v } : v;
    }
  }
  return out;
}

// The note on the nodes a distribution or channelwise result left out (they did not run on its one
// sample: inside a branch it does not take, §1.13), or null when it plotted every node asked for.
export function notRunNote(result, section) {
  const names = result?.[`${section}_not_run`];
  if (!names?.length) return null;
  return `${section}: not plotted, did not run on sample '${result[`${section}_sample`]}' (inside a branch the sample does not take): ${names.join(', ')}`;
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// The figures of the acc_error section with their curves resolved (§5.3 order):
// [{prefix, metric, average_mode, file_name, curves: [{name (= label), key, x, y}]}]. Figures list
// curves by key into result.acc_error (or inline as {name, x, y}).
export function accErrorFigures(result) {
  const curves = result.acc_error || {};
  return (result.acc_error_figures || []).map((f) => ({
    ...f,
    curves: (f.curves || []).map((c) => {
      if (typeof c !== 'string') return c;
      const curve = curves[c];
      if (!curve) throw new Error(`acc_error_figures: curve "${c}" of figure "${f.prefix}" is not in acc_error`);
      return { ...curve, name: curve.label ?? c, key: c };
    }),
  }));
}

// The directory of each kind of chart in the original's result tree (runall's save_dir, §8.4).
export const CHART_DIRS = {
  acc_error: 'accumulate_error',
  distribution: 'data_distribution',
  channelwise: 'channelwise_distribution',
  stat_info: 'stat_info',
  sensitivity_analysis: 'sensitivity_analysis',
};

/**
 * chartsOf(result) -> [{kind, key, file_name, data}], every chart a result document holds, in the
 * order the original draws them: accumulated-error figures (§5.3), distribution histograms and
 * channel box plots (request order), the stat-info curves (weight, feature) and the partial
 * quantization chart. kind: 'acc_error' | 'distribution' | 'channelwise' | 'stat_info' |
 * 'sensitivity_analysis'; key: the figure prefix, node name or tensor type; file_name: the
 * original's .png name; data: what the chart module of that kind draws.
 */
export function chartsOf(result) {
  const charts = [];
  if (!result) return charts;
  for (const figure of accErrorFigures(result)) {
    charts.push({ kind: 'acc_error', key: figure.prefix, file_name: figure.file_name, data: figure });
  }
  for (const key of orderedKeys(result.distribution, result.distribution_order)) {
    const plot = result.distribution[key];
    charts.push({ kind: 'distribution', key, file_name: plot.file_name ?? `${key}.png`, data: { name: key, ...plot } });
  }
  // Run order = the request's nodes_list (a channel-histogram request re-runs one item of it, so its
  // channelwise_order names that item alone).
  const channelwiseOrder = result.options?.channelwise?.nodes_list ?? result.channelwise_order;
  for (const key of orderedKeys(result.channelwise, channelwiseOrder)) {
    const plot = result.channelwise[key];
    charts.push({ kind: 'channelwise', key, file_name: plot.file_name ?? `${key}_boxplot.png`, data: { name: key, ...plot } });
  }
  // §8.1 visualize: <weight|feature>_stat_info.png
  for (const tensorType of ['weight', 'feature']) {
    const curves = result.stat_info_curves?.[tensorType];
    if (curves?.nodes?.length) {
      charts.push({ kind: 'stat_info', key: tensorType, file_name: `${tensorType}_stat_info.png`, data: { tensorType, curves } });
    }
  }
  const sa = result.sensitivity_analysis;
  if (sa) charts.push({ kind: 'sensitivity_analysis', key: 'partial_quantization', file_name: sa.file_name ?? 'partial_quantization.png', data: sa });
  return charts;
}

// The calibration files a section was computed on (result-schema.md: `samples` of the sweeps,
// `<section>_sample` / `<section>_samples`, `samples` inside what_if / node_errors, `fix_samples`).
export function sectionSamples(result, section) {
  const inside = result?.[section]?.samples;
  const named = result?.[`${section}_samples`] ?? result?.[`${section}_sample`] ??
    (section === 'sensitivity' || section === 'leave_one_out' ? result?.samples : undefined);
  const list = Array.isArray(inside) ? inside : named;
  if (list === undefined || list === null) return null;
  return Array.isArray(list) ? list : [list];
}

// "6 of 6 samples" / "1 of 6 samples (9.npy)": what a number beside it was computed on (the sample
// named when it is one), or '' when the document does not say.
export function samplesNote(result, section) {
  const used = sectionSamples(result, section);
  if (!used) return '';
  const of = result?.calibration_samples;
  const count = of === undefined ? `${used.length}` : `${used.length} of ${of}`;
  return `${count} sample${of === 1 || (of === undefined && used.length === 1) ? '' : 's'}${used.length === 1 ? ` (${used[0]})` : ''}`;
}

// The ranked hints of a cause-hints result (`explain`, docs/result-schema.md `hints`), numbers as JS
// numbers: [{calibration_node, node, cause, evidence, suggestion, effect}], most effective cure first.
export function explainRows(result) {
  return (result?.hints ?? []).map((h) => ({
    ...h,
    effect: {
      ...h.effect,
      before: toNumber(h.effect.before),
      after: toNumber(h.effect.after),
      recovered: toNumber(h.effect.recovered),
      held_out: h.effect.held_out ? { before: toNumber(h.effect.held_out.before), after: toNumber(h.effect.held_out.after) } : null,
    },
  }));
}

// One calibration node's evidence as a "Why" view draws it: the histogram's bins with their edges
// ([{x0, x1, count}]), the quantizer's range and thresholds, and the shares clipped, levels used and
// rounded to zero; null when the result has no evidence of that node.
export function hintEvidence(result, calibrationNode) {
  const e = result?.hints_evidence?.[calibrationNode];
  if (!e) return null;
  const lo = toNumber(e.histogram.lo);
  const hi = toNumber(e.histogram.hi);
  const width = (hi - lo) / Math.max(1, e.histogram.counts.length);
  return {
    ...e,
    range: e.range.map(toNumber),
    thresholds: e.thresholds.map(toNumber),
    bins: e.histogram.counts.map((count, i) => ({ x0: lo + i * width, x1: lo + (i + 1) * width, count })),
    hints: (result.hints ?? []).filter((h) => h.calibration_node === calibrationNode),
  };
}

// The hints as a heat layer: per node (the node each hint's quantizer feeds) the largest share of the
// output loss one of its cures recovers.
export function hintLayer(result) {
  const layer = new Map();
  for (const h of explainRows(result)) {
    if (!h.node) continue;
    layer.set(h.node, Math.max(layer.get(h.node) ?? -Infinity, h.effect.recovered));
  }
  return layer;
}

// The settings of a calibration-method comparison (`calibration_methods`) with their metrics as JS
// numbers, and which one is best overall and per toolchain.
export function calibrationMethodRows(result) {
  const section = result?.calibration_methods;
  if (!section) return [];
  const numbers = (m) => (m ? Object.fromEntries(Object.entries(m).map(([k, v]) => [k, toNumber(v)])) : null);
  const bestFor = Object.entries(section.best_by_toolchain ?? {});
  return section.settings.map((s) => ({
    ...s,
    tune: numbers(s.tune),
    held_out: numbers(s.held_out),
    best: s.label === section.best,
    best_for: bestFor.filter(([, label]) => label === s.label).map(([toolchain]) => toolchain),
  }));
}
