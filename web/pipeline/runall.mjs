// runall (§8.4) on a worker pool, in the original's order:
//   1. node sensitivity (weight then activation by default; top 5 of each -> nodes_list)
//   2. data distribution of dis_nodes_list or nodes_list
//   3. channel-wise box plots of cw_nodes_list or nodes_list
//   4. accumulated error (quantize_node = ['weight', 'activation'] when neither list is given)
//   5. sensitivity analysis (sensitive nodes picked from a `node` ranking with cosine <= pick_threshold)
// Returns every stage's result document, the combined document (one result-schema document with all
// sections) and the .log files of step 1 (§8.3 text). The charts to draw are the result module's
// chartsOf of each stage's document.
//
// Deliberate differences from the original (docs/compatibility.md): lists are de-duplicated keeping
// their first-occurrence order (the original goes through a Python set); dis_nodes_list is used
// parsed (the original's CLI passes it on unparsed, so a bracketed list fails).
import { ORIGINAL_NODE_TYPES, optionDefault } from './catalog.mjs';
import { asList, combineDocuments, notRunNote, orderedRows } from './result.mjs';
import { runAnalysis } from './sweep.mjs';
import { formatSensitivityLog } from './tables.mjs';

// runall's defaults (§8.4) are those of the analyses it runs, as the core describes them.
export const DEFAULT_RUNALL_OPTIONS = {
  ns_metrics: optionDefault('sensitivity', 'metrics'), output_node: null, node_type: null,
  data_num: optionDefault('sensitivity', 'data_num'), verbose: false, interested_nodes: null, dis_nodes_list: null,
  cw_nodes_list: null, axis: null, quantize_node: null, non_quantize_node: null, ae_metric: optionDefault('acc_error', 'metric'),
  average_mode: optionDefault('acc_error', 'average_mode'), pick_threshold: optionDefault('sensitivity_analysis', 'pick_threshold'),
  sensitive_nodes: null,
};

// The result directory of each stage (runall's save_dir + "<dir>/").
export const STAGE_DIRS = {
  sensitivity: 'node_sensitivity',
  distribution: 'data_distribution',
  channelwise: 'channelwise_distribution',
  acc_error: 'accumulate_error',
  sensitivity_analysis: 'sensitivity_analysis',
};

export function inputError(message) {
  return Object.assign(new Error(message), { name: 'PtqError' });
}

// Options left at None are not sent: the core applies the Python API's defaults.
export const withoutNone = (options) => Object.fromEntries(Object.entries(options).filter(([, v]) => v !== null && v !== undefined));

const unique = (list) => [...new Set(list)];
const flat = (list) => (list ?? []).flat(Infinity);

// The checks runall makes before running anything (§8.4 "Checks first").
export function checkRunallOptions(o) {
  for (const t of asList(o.node_type) ?? []) {
    if (!ORIGINAL_NODE_TYPES.includes(t)) throw inputError(`node_type:${t} is unavailable.`);
  }
  if (flat(asList(o.non_quantize_node)).some((n) => n === 'weight' || n === 'activation')) {
    throw inputError("In acc_error section, cannot set 'non_quantize_node' to 'weight' or 'activation'.");
  }
}

// §1.9 get_calibration_by_node from a sensitivity `node` document is not available in the result, so
// the caller passes `calibrationSetOf(name) -> [calibration node names]` (the CLI builds it from the
// graph); without it, node names are kept as they are. `hooks.config`: a quantization configuration
// (docs/config-schema.md) every analysis runs under.
export async function runAll(pool, userOptions, hooks = {}) {
  const o = { ...DEFAULT_RUNALL_OPTIONS, ...userOptions };
  checkRunallOptions(o);
  const { signal, onStage, onProgress, onItem, modelFile, calibrationSetOf, config } = hooks;
  const base = { ...(modelFile ? { model_file: modelFile } : {}), ...(config ? { config } : {}) };
  const run = (analysis, options) => runAnalysis(pool, { analysis, options: withoutNone(options), ...base },
    { signal, onProgress, onItem });
  const docs = {};
  const logs = [];
  const messages = [];

  // 1. node sensitivity
  const multi = o.node_type === null || Array.isArray(o.node_type);
  const types = o.node_type === null ? ['weight', 'activation'] : asList(o.node_type);
  let nodesList = [];
  const sensitivityDocs = [];
  for (const t of types) {
    onStage?.('sensitivity', t);
    const doc = await run('sensitivity', {
      node_type: t, metrics: asList(o.ns_metrics), output_node: asList(o.output_node), data_num: o.data_num,
      interested_nodes: o.interested_nodes,
    });
    sensitivityDocs.push(doc);
    const rows = orderedRows(doc.sensitivity[t], doc.sensitivity_order?.[t]);
    logs.push({ stage: 'sensitivity', file_name: `sensitivity_of_${t}.log`, text: formatSensitivityLog(t, rows, asList(o.ns_metrics)), nodeType: t, rows });
    const top = rows.slice(0, 5).map(([k]) => k);
    if (multi) nodesList.push(...top);
    else nodesList = t === 'node' && calibrationSetOf ? unique(top.flatMap((n) => calibrationSetOf(n))) : unique(top);
  }
  docs.sensitivity = combineDocuments(sensitivityDocs);

  // 2. data distribution, 3. channel-wise
  // (an empty list draws nothing, as plot_distribution([]) in the original)
  const disNodes = asList(o.dis_nodes_list) ?? nodesList;
  onStage?.('distribution');
  if (disNodes.length) docs.distribution = await run('distribution', { nodes_list: disNodes });
  const cwNodes = asList(o.cw_nodes_list) ?? nodesList;
  onStage?.('channelwise');
  if (cwNodes.length) docs.channelwise = await run('channelwise', { nodes_list: cwNodes, axis: o.axis });
  // Top-5 nodes inside a branch the plotted sample does not take are left out of its plots (§1.13).
  for (const section of ['distribution', 'channelwise']) {
    const note = notRunNote(docs[section], section);
    if (note) messages.push(note);
  }

  // 4. accumulated error
  onStage?.('acc_error');
  const bothNone = o.quantize_node === null && o.non_quantize_node === null;
  docs.acc_error = await run('acc_error', {
    quantize_node: bothNone ? ['weight', 'activation'] : o.quantize_node, non_quantize_node: o.non_quantize_node,
    metric: o.ae_metric, average_mode: o.average_mode,
  });

  // 5. sensitivity analysis
  let sensitive = asList(o.sensitive_nodes);
  const nodeRows = logs.find((l) => l.nodeType === 'node')?.rows;
  if (!sensitive && o.node_type === 'node' && asList(o.ns_metrics).includes('cosine-similarity') && nodeRows) {
    sensitive = nodeRows.filter(([, r]) => typeof r['cosine-similarity'] === 'number' && r['cosine-similarity'] <= o.pick_threshold)
      .map(([k]) => k);
    if (!sensitive.length) {
      messages.push('pick_threshold is too small, there is no sensitive node that meets the requirements, please increase pick_threshold.');
      sensitive = null;
    }
  }
  onStage?.('sensitivity_analysis');
  docs.sensitivity_analysis = await run('sensitivity_analysis', {
    pick_threshold: o.pick_threshold, data_num: o.data_num, sensitive_nodes: sensitive,
  });

  const result = combineDocuments([docs.sensitivity, docs.distribution, docs.channelwise, docs.acc_error, docs.sensitivity_analysis].filter(Boolean));
  if (messages.length) result.runall_messages = messages;
  return { docs, result, logs, messages };
}
