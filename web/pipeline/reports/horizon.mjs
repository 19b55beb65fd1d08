// Horizon / D-Robotics converter log (hb_mapper makertbin, hb_compile: console, hb_mapper_makertbin.log,
// hb_compile.log): the per-node table HMCT prints after calibration,
//   The main quantized node information:
//   ====================================
//   Node   ON   Subgraph   Type   Cosine Similarity   Threshold   DataType     (hybrid path: X3/Ultra/X5)
//   Node   Type   Cosine Similarity   Threshold   DataType                     (PTQ path: J6/S100)
//   ------------------------------------
//   <one row per node>
// Confirmed from HMCT's printer (print_model_info / print_info_dict, in the dg-nn-toolkit packaging of
// HMCT) and the RDK documentation. Columns are left-aligned and padded, titles contain single spaces,
// so cells are cut at the header titles' offsets (never split on whitespace). `--` is an empty cell.
// The Node column is at most 50 characters: longer names are printed as `...` + their last 47
// characters (the mapping matches those by suffix). Only the first line of the block carries the
// log prefix. The model-output table that follows ("The quantized model output:", key column
// `Output`) is about model outputs, not nodes, and is not read.
// Cosine Similarity is the calibrated model (calibration nodes as saved) against the same model with
// every calibration node off (HMCT's calculate_similarity), measured on the output of the HzCalibration
// that directly follows the node when there is one (the fake-quantized output), else on its first
// output, over the whole fed batch flattened into one vector: ptqscope's accumulated node error measured
// as the converter does (node_errors, measure "converter", §12.3). Older horizon_nn builds add 1e-5 to
// the dot product and to the product of the norms; hmct takes the core's formula (§4). Tables that
// also have distance columns (hmct's per-node results, the output table of old logs keyed by `Node`)
// give L1 Distance = the mean absolute error (the core's mre), Chebyshev Distance = the largest
// absolute error (chebyshev) and L2 Distance, which is the mse in hmct but sqrt(sum of squares) / n in
// horizon_nn (the two cannot be told apart in a log), so it stays a metric of its own.
// Names are node names of the calibrated model (`keys: 'node'`).
import { parseNumber } from './common.mjs';

export const id = 'horizon';
export const label = 'Horizon converter log (node table: Cosine Similarity, Threshold, DataType; L1 / L2 / Chebyshev Distance where given)';
export const keys = 'node';

const COSINE = 'cosine similarity';
const THRESHOLD = 'threshold';
// The distance columns: the log's title, the metric's name and its declaration.
const DISTANCES = [
  { title: 'L1 Distance', metric: { name: 'l1 distance', core: 'mre' } },
  { title: 'L2 Distance', metric: { name: 'l2 distance', better: 'lower' } },
  { title: 'Chebyshev Distance', metric: { name: 'chebyshev distance', core: 'chebyshev' } },
];
const METRIC_COLUMNS = [{ title: 'Cosine Similarity', name: COSINE }, ...DISTANCES.map((d) => ({ title: d.title, name: d.metric.name }))];

export function detect(name, text) {
  return /^\s*Node\s{2,}.*Cosine Similarity/m.test(text) || /The main quantized node information/.test(text);
}

// [{title, start}] of a header line: titles are separated by two or more spaces.
function columns(line, from) {
  const out = [];
  const re = /\S+(?: \S+)*/g;
  re.lastIndex = from;
  for (let m; (m = re.exec(line)); ) out.push({ title: m[0], start: m.index });
  return out;
}

export function parse(text) {
  const lines = text.split(/\r\n|\r|\n/);
  const problems = [];
  const rows = [];
  // The first threshold of the node's first input is not an error: shown in the table only.
  const metrics = [{ name: COSINE, core: 'cosine-similarity', kind: 'accumulated', measure: 'converter' }];
  const distances = new Set(); // the distance columns some table has
  let tables = 0;
  for (let n = 0; n < lines.length; n++) {
    const at = lines[n].search(/\bNode\s{2,}/);
    if (at < 0 || !/Cosine Similarity/.test(lines[n])) continue;
    tables++;
    const cols = columns(lines[n], at);
    const index = Object.fromEntries(cols.map((c, k) => [c.title, k]));
    if (!('Cosine Similarity' in index)) continue;
    for (const d of DISTANCES) if (d.title in index) distances.add(d);
    let k = n + 1;
    if (/^\s*-{3,}\s*$/.test(lines[k] ?? '')) k++;
    for (; k < lines.length; k++) {
      const line = lines[k];
      if (!line.trim() || /^\s*[=-]{3,}\s*$/.test(line)) break;
      if (/^\d{4}-\d\d-\d\d[ T]\d\d:\d\d/.test(line)) break; // the next log record
      const cell = (title) => {
        const c = index[title];
        if (c === undefined) return '';
        const end = c + 1 < cols.length ? cols[c + 1].start : undefined;
        return line.slice(cols[c].start, end).trim();
      };
      const node = cell('Node');
      if (!node) {
        problems.push({ line: k + 1, reason: `row without a node name: ${clip(line.trim())}` });
        continue;
      }
      // A row wider than its columns (a cell overflowing into the next) shows up as two words in one cell.
      const values = {};
      let bad = null; // the first metric cell that is no number
      for (const { title, name } of METRIC_COLUMNS) {
        const text = cell(title);
        if (!text || text === '--') continue;
        const v = parseNumber(text);
        if (v === null) {
          bad = title;
          break;
        }
        values[name] = v;
      }
      if (bad) {
        problems.push({ line: k + 1, reason: `${bad} of ${node} is not a number: ${JSON.stringify(cell(bad))}` });
        continue;
      }
      const thText = cell('Threshold');
      const info = {};
      for (const t of ['ON', 'Subgraph', 'Type', 'DataType']) if (t in index && cell(t) && cell(t) !== '--') info[t] = cell(t);
      if (thText && thText !== '--') {
        const th = parseNumber(thText);
        if (th === null) problems.push({ line: k + 1, reason: `Threshold of ${node} is not a number: ${JSON.stringify(thText)}` });
        else info[THRESHOLD] = th;
      }
      rows.push({ layer: node, values, line: k + 1, info, truncated: node.startsWith('...') });
    }
    n = k - 1;
  }
  if (!tables) problems.push({ line: 1, reason: 'no node table (a header line "Node ... Cosine Similarity ...")' });
  for (const d of DISTANCES) if (distances.has(d)) metrics.push(d.metric);
  return { metrics, rows, problems };
}

const clip = (s) => (s.length > 80 ? `${s.slice(0, 77)}...` : s);
