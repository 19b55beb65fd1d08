// Netron metrics attachment: a JSON file opened in Netron beside a model, whose `metrics` items show
// in the node and tensor sidebars. Two generations, confirmed in Netron's source (source/view.js,
// metadata.Attachment; 8.2.6, 8.2.8 through 9.2.1):
//   >= 8.2.8:  {"signature": "netron:attachment", "metadata": [Item], "metrics": [Item]}
//   8.2.6-7:   a file named *.metrics.json, {"signature": "metrics", "metrics": [Item]}
// Item = {kind: model|graph|node|value|tensor, target (or identifier), name, value, type?}.
// ptqscope reads the numeric `metrics` items of kind node (target = node name), value (target =
// tensor name) and tensor (target = initializer name); `metadata` holds text and is not read.
// Items of kind model / graph are about the whole model: listed, not placed on a node.
// An attachment says nothing about which direction is better: a metric named like one of the core's
// (cosine-similarity, sqnr, ...; also as its last word) takes the core's direction; other names are
// higher-is-better when they say so (cos, similar, snr, acc, score) and for ranks (rank 1 = the most
// sensitive item, hot), else lower-is-better (errors, losses, distances). ptqscope's own export
// (Export → Netron attachment) reads back this way.
import { isPlainObject, lineCounter, parseJsonLenient, parseNumber } from './common.mjs';
import { isMetric } from '../catalog.mjs';

export const id = 'netron';
export const label = 'Netron metrics attachment (netron:attachment JSON, *.metrics.json)';
export const keys = 'node';

export function detect(name, text) {
  return /"signature"\s*:\s*"(netron:attachment|metrics)"/.test(text) || /\.metrics\.json$/i.test(name ?? '');
}

const HIGHER = /cos|similar|snr|acc|score|rank/i;
const lastWord = (name) => name.split(/\s+/).filter((w) => !w.startsWith('(')).pop() ?? name;

// The declared direction of a metric name (see above).
export function metricOf(name) {
  const core = [name, lastWord(name)].find(isMetric);
  if (core) return { name, core };
  return { name, better: HIGHER.test(name) ? 'higher' : 'lower' };
}

// 1-based line of each element of the array that follows `"metrics": [`.
function itemLines(text) {
  const lines = [];
  const lineAt = lineCounter(text);
  const open = text.search(/"metrics"\s*:\s*\[/);
  if (open < 0) return lines;
  let depth = 0;
  let inString = false;
  for (let i = text.indexOf('[', open) + 1; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      if (depth === 0) lines.push(lineAt(i));
    } else if (c === '{' || c === '[') {
      if (depth === 0) lines.push(lineAt(i));
      depth++;
    } else if (c === '}' || c === ']') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && /[-\dntf]/.test(c) && !/[\w.]/.test(text[i - 1])) {
      lines.push(lineAt(i)); // a bare number / true / false / null element
    }
  }
  return lines;
}

export function parse(text) {
  const problems = [];
  const rows = [];
  const { value: doc, error } = parseJsonLenient(text);
  if (error) return { metrics: [], rows, problems: [{ line: 1, reason: `not valid JSON: ${error}` }] };
  if (!isPlainObject(doc) || !Array.isArray(doc.metrics)) {
    return { metrics: [], rows, problems: [{ line: 1, reason: 'expected {"signature": "netron:attachment", "metrics": [...]}' }] };
  }
  const lines = itemLines(text);
  const byTarget = new Map();
  const metrics = new Map();
  doc.metrics.forEach((item, k) => {
    const line = lines[k] ?? null;
    if (!isPlainObject(item)) {
      problems.push({ line, reason: `metrics item ${k + 1} is not an object` });
      return;
    }
    const { kind, name } = item;
    if (typeof name !== 'string' || !name) {
      problems.push({ line, reason: `metrics item ${k + 1}: no "name"` });
      return;
    }
    if (!['node', 'value', 'tensor', 'model', 'graph'].includes(kind)) {
      problems.push({ line, reason: `metrics item ${k + 1} (${name}): unknown kind ${JSON.stringify(kind ?? null)}` });
      return;
    }
    if (kind === 'model' || kind === 'graph') {
      rows.push({ layer: `(${kind}) ${name}`, values: {}, line, info: { kind, whole: true } });
      return;
    }
    const target = typeof item.target === 'string' ? item.target.split('\n')[0] : item.identifier;
    if (typeof target !== 'string' || !target) {
      problems.push({ line, reason: `metrics item ${k + 1} (${name}): no "target"` });
      return;
    }
    const v = parseNumber(item.value);
    if (v === null) {
      problems.push({ line, reason: `${target}: ${name} is not a number (${JSON.stringify(item.value ?? null)})` });
      return;
    }
    if (!metrics.has(name)) metrics.set(name, metricOf(name));
    const key = `${kind}\u0000${target}`;
    let row = byTarget.get(key);
    if (!row) {
      row = { layer: target, values: {}, line, info: { kind } };
      byTarget.set(key, row);
      rows.push(row);
    }
    row.values[name] = v; // as in Netron: the last item of a (target, name) pair wins
  });
  return { metrics: [...metrics.values()], rows, problems };
}
