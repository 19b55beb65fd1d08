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
// Cosine Similarity is the calibrated model (all calibration nodes on) against the same model with
// every calibration node off, at the node's first output: ptqscope's accumulated node error in
// cosine-similarity (the HMCT formula adds 1e-5 to numerator and denominator).
// Names are node names of the calibrated model (`keys: 'node'`).
import { parseNumber } from './common.mjs';

export const id = 'horizon';
export const label = 'Horizon converter log (node table: Cosine Similarity, Threshold, DataType)';
export const keys = 'node';

const COSINE = 'cosine similarity';
const THRESHOLD = 'threshold';

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
  const metrics = [
    { name: COSINE, core: 'cosine-similarity', kind: 'accumulated' },
    // The first threshold of the node's first input: not an error, shown in the table only.
  ];
  let tables = 0;
  for (let n = 0; n < lines.length; n++) {
    const at = lines[n].search(/\bNode\s{2,}/);
    if (at < 0 || !/Cosine Similarity/.test(lines[n])) continue;
    tables++;
    const cols = columns(lines[n], at);
    const index = Object.fromEntries(cols.map((c, k) => [c.title, k]));
    if (!('Cosine Similarity' in index)) continue;
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
      const cosText = cell('Cosine Similarity');
      const values = {};
      if (cosText && cosText !== '--') {
        const v = parseNumber(cosText);
        if (v === null) {
          problems.push({ line: k + 1, reason: `Cosine Similarity of ${node} is not a number: ${JSON.stringify(cosText)}` });
          continue;
        }
        values[COSINE] = v;
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
  return { metrics, rows, problems };
}

const clip = (s) => (s.length > 80 ? `${s.slice(0, 77)}...` : s);
