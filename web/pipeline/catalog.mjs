// Lookups into the core's description of itself (describe.mjs, docs/wasm-api.md `describe()`): the
// one place JS learns the metrics and which direction is better, the node types, and each analysis'
// options with their defaults and choices. Faces (CLI flags, the page's forms, the heat scale, the
// table) read these instead of repeating them.
import describe from './describe.mjs';

export { describe };

export const METRICS = describe.metrics.map((m) => m.name);
export const NODE_TYPES = describe.node_types;
export const ANALYSES = describe.analyses.map((a) => a.name);
// The convolution kernels ({name, doc}, the default first): setConvolutionMode's names, the CLI's
// --conv values and the page's "Convolutions" setting.
export const CONVOLUTION_MODES = describe.convolution_modes;
// How calibration nodes relate to the nodes reading them (§1.9), per toolchain version ({name, doc,
// skippable}, the default first): Session.setRelations' names, the CLI's --relations values and the
// page's and plugin's "Relations" setting.
export const RELATION_RULES = describe.relation_rules;
// The node types the original's command line and runall accept (§3.1: "CLI restricts to the first
// three"; §8.4): every node type of the core but tae.
export const ORIGINAL_NODE_TYPES = NODE_TYPES.filter((t) => t !== 'tae');

const byName = (list, name) => list.find((e) => e.name === name);

// The analysis entry ({name, section, splittable, streams_items, keyed_by, sort, options}).
export function analysisSpec(analysis) {
  const a = byName(describe.analyses, analysis);
  if (!a) throw new Error(`unknown analysis '${analysis}' (known: ${ANALYSES.join(', ')})`);
  return a;
}

// What an analysis runs the model for (describe().analyses[].needs_execution): 'always', or
// 'activations' (weight calibration nodes come from the stored weights, so it works on a model with
// ops the core cannot run, summary.unsupported).
export const needsExecution = (analysis) => analysisSpec(analysis).needs_execution;
export const ANALYSES_WITHOUT_EXECUTION = describe.analyses.filter((a) => a.needs_execution !== 'always').map((a) => a.name);

// What a model with unsupported ops (a load's summary) still offers, in one sentence after the core's
// list of them; '' for a model that runs.
export function limitedModelText(summary) {
  if (!summary?.unsupported?.length) return '';
  return `${summary.unsupportedMessage}. It opens without running: the graph (the unsupported nodes are marked), ` +
    `and ${ANALYSES_WITHOUT_EXECUTION.join(', ')} on weight calibration nodes; the other analyses need every op`;
}

// One option of an analysis ({name, type, default, choices, required, null_is_all, min, max, doc}).
export function optionSpec(analysis, option) {
  const a = analysisSpec(analysis);
  const o = byName(a.options, option);
  if (!o) throw new Error(`analysis '${analysis}' has no option '${option}' (known: ${a.options.map((e) => e.name).join(', ')})`);
  return o;
}

// What the core uses when the option is absent (null: no value).
export const optionDefault = (analysis, option) => optionSpec(analysis, option).default;

// What the page's and the plugin's forms start with (the core's interactive_default where it has one:
// data_num starts at every sample there, while the CLI keeps the original's one sample).
export function interactiveDefault(analysis, option) {
  const o = optionSpec(analysis, option);
  return o.interactive_default ?? o.default;
}

// 'higher' | 'lower': which values of `metric` are better (§4 optimum).
export function betterDirection(metric) {
  const m = byName(describe.metrics, metric);
  if (!m) throw new Error(`unknown metric "${metric}" (expected one of ${METRICS.join(', ')})`);
  return m.better;
}

// The toolchain formats of Session.exportConfig ({name, suffix, media_type, binary, label, thresholds},
// core order). thresholds: the format can carry new thresholds (a fix for it tries `threshold` first).
export const EXPORT_FORMATS = describe.export_formats;

// The integer qtypes the faces offer as actions on a node ({name, bits, unsigned, doc}: int8, uint8,
// int16, uint16).
export const QTYPES = describe.qtypes;

// One export format by name; throws naming the known ones.
export function exportFormat(name) {
  const f = byName(EXPORT_FORMATS, name);
  if (!f) throw new Error(`unknown export format '${name}' (known: ${EXPORT_FORMATS.map((e) => e.name).join(', ')})`);
  return f;
}

// Whether the export format `name` can carry new thresholds (null / '' = any format: yes).
export const exportCarriesThresholds = (name) => (name ? exportFormat(name).thresholds === true : true);

// Whether `column` is a metric (the table's numeric columns that have a direction).
export const isMetric = (column) => METRICS.includes(column);

// The ops the core knows (describe().ops: {domain, op_type, since, until, executed, category, inputs},
// registered with their kernels in wasm/src/ops): what the viewers show of a node. By op type, the
// entry of the newest opset (a viewer names inputs as the newest opset does).
const OPS = new Map();
for (const op of describe.ops) {
  const known = OPS.get(op.op_type);
  if (!known || op.since > known.since) OPS.set(op.op_type, op);
}

// The op's entry, or null when the core does not know it.
export const opSpec = (opType) => OPS.get(opType) ?? null;

// The newest entry of every op of `domain` ('' = ai.onnx, 'horizon'), in the core's order.
export const opsOfDomain = (domain) => [...OPS.values()].filter((op) => op.domain === domain);

// The cause hints' facts (docs/behaviour.md §13): the causes ({name, doc, rule, cure}) in the order
// the rules are checked, the cut-offs of the rules ({clipped, occupied, channel_spread, branch_ratio,
// negative, inherited}), the threshold methods ({name, doc}) and the split of a search's samples into
// tuning and held-out ones ({rule, doc}).
export const CAUSES = describe.causes;
export const HINT_RULES = describe.hint_rules;
export const THRESHOLD_METHODS = describe.threshold_methods;
// The hints as a heat layer ({name: 'recovered', better, doc}): per node the largest share of the
// output loss one of its cures recovers, and which direction is better.
export const HINT_LAYER = describe.hint_layer;
export const SAMPLE_SPLIT = describe.sample_split;

// One cause by name; throws naming the known ones.
export function cause(name) {
  const c = byName(CAUSES, name);
  if (!c) throw new Error(`unknown cause '${name}' (known: ${CAUSES.map((e) => e.name).join(', ')})`);
  return c;
}
