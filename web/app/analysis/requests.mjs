// Analysis requests from the panels' form values (pure). Option names are the python API's
// (§3–§8); a value the form leaves out takes the core's default (its describe() document,
// web/pipeline/catalog.mjs), as the CLI's flags do.
import { DEFAULT_RUNALL_OPTIONS } from '../../pipeline/runall.mjs';
import { METRICS, ORIGINAL_NODE_TYPES, optionDefault, interactiveDefault } from '../../pipeline/catalog.mjs';
import { orderedKeys } from '../../pipeline/result.mjs';

export const ANALYSES = [
  { id: 'sensitivity', title: 'Sensitivity' },
  { id: 'acc_error', title: 'Accumulated error' },
  { id: 'distribution', title: 'Distributions' },
  { id: 'channelwise', title: 'Channel box plots' },
  { id: 'stat_info', title: 'Calibration stat info' },
  { id: 'sensitivity_analysis', title: 'Sensitivity analysis' },
  { id: 'leave_one_out', title: 'Leave-one-out' },
];

// The metrics and the node types the forms offer (those of the original's command line).
export { METRICS };
export const NODE_TYPES = ORIGINAL_NODE_TYPES;

// The page's and the plugin's data_num when the form has none: every sample (the core's
// interactive_default, 0), where the CLI keeps the original's one.
export const interactiveDataNum = (analysis) => interactiveDefault(analysis, 'data_num');

// The form's data_num, else the page's default for `analysis`: "" → 0 (every sample: spelled 0, not
// null, which the pipeline would drop as "absent" and the core would then read as its default); "3" → 3.
function dataNumOf(value, analysis) {
  const v = value ?? (interactiveDataNum(analysis) || '');
  if (v === '' || v === null) return 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`data_num must be a positive integer or empty for all samples (got '${v}')`);
  return n;
}

function list(v) {
  if (v === null || v === undefined) return [];
  if (v instanceof Set) return [...v];
  if (Array.isArray(v)) return v;
  return String(v).split(/[,;\s]+/).filter(Boolean);
}

function orNull(names) {
  return names.length ? names : null;
}

// form: the panel's values; picked: the graph's multi-selection (Set of node names).
export function buildRequest(analysis, form = {}, picked = new Set()) {
  const pickedList = [...picked];
  switch (analysis) {
    case 'sensitivity':
    case 'leave_one_out': {
      const metrics = list(form.metrics);
      return {
        analysis,
        options: {
          node_type: form.node_type ?? optionDefault(analysis, 'node_type'),
          metrics: metrics.length ? metrics : optionDefault(analysis, 'metrics'),
          data_num: dataNumOf(form.data_num, analysis),
          sample_selection: form.sample_selection ?? optionDefault(analysis, 'sample_selection'),
          output_node: orNull(list(form.output_node)),
          interested_nodes: form.use_picked && pickedList.length ? pickedList : null,
        },
      };
    }
    case 'acc_error': {
      const quantize = list(form.quantize_node);
      const nonQuantize = list(form.non_quantize_node);
      if (!quantize.length && !nonQuantize.length) {
        throw new Error("accumulated error: set 'quantize_node' or 'non_quantize_node' (pick nodes on the graph, use the top-k of the sensitivity table, or type weight / activation)");
      }
      return {
        analysis,
        options: {
          quantize_node: orNull(quantize),
          non_quantize_node: orNull(nonQuantize),
          metric: form.metric ?? optionDefault(analysis, 'metric'),
          average_mode: Boolean(form.average_mode),
        },
      };
    }
    case 'distribution':
    case 'stat_info':
    case 'channelwise': {
      const nodes = list(form.nodes_list ?? pickedList);
      if (!nodes.length && analysis !== 'stat_info') {
        throw new Error(`${analysis}: pick nodes on the graph (or type their names) first`);
      }
      const options = { nodes_list: orNull(nodes) };
      if (analysis === 'channelwise' && form.axis !== '' && form.axis !== undefined && form.axis !== null) {
        options.axis = Number(form.axis);
      }
      return { analysis, options };
    }
    case 'sensitivity_analysis':
      return {
        analysis,
        options: {
          pick_threshold: Number(form.pick_threshold ?? optionDefault(analysis, 'pick_threshold')),
          data_num: dataNumOf(form.data_num, analysis),
          sensitive_nodes: orNull(list(form.sensitive_nodes ?? [])),
        },
      };
    default:
      throw new Error(`unknown analysis '${analysis}'`);
  }
}

// The first k items of a sensitivity table (its sorted order), e.g. for the accumulated-error sets.
export function topK(result, nodeType, k) {
  return orderedKeys(result?.sensitivity?.[nodeType], result?.sensitivity_order?.[nodeType]).slice(0, Math.max(0, k));
}

// Options of runAll (§8.4) from the Run-all form.
export function runAllOptions(form = {}) {
  const metrics = list(form.ns_metrics);
  const d = DEFAULT_RUNALL_OPTIONS;
  return {
    ns_metrics: metrics.length ? metrics : d.ns_metrics,
    node_type: form.node_type || null,
    data_num: dataNumOf(form.data_num, 'sensitivity'),
    ae_metric: form.ae_metric ?? d.ae_metric,
    average_mode: Boolean(form.average_mode),
    pick_threshold: Number(form.pick_threshold ?? d.pick_threshold),
  };
}
