// Rockchip rknn-toolkit2 `accuracy_analysis` report: snapshot/error_analysis.txt. One row per layer,
// `[<OpType>] <tensor name>` then its metric cells. Two generations, told apart by the header:
//   1.6.0 – 2.3.x: each cell is `cos | euc` (cosine with 5 decimals, then the Euclidean distance);
//   up to 1.5.x:  each cell is one cosine (6 decimals).
// Column groups: simulator_error `entire` (golden vs simulator, error accumulated from the input) and
// `single` (golden vs simulator for this layer alone, fed with golden inputs); with a board
// (accuracy_analysis(target=...)) also runtime_error `entire` and `single_sim` (simulator vs runtime).
// Input rows carry only the simulator cells; a row with no cells is a layer the toolkit fused into
// the next row (that reading is inferred from the official examples, not documented).
// Confirmed from the toolkit's example READMEs (accuracy_analysis, npu_device_test / board_test of
// 1.5.2 and 2.3.2); the toolkit itself is closed source, so other header layouts are read by the
// same rules and any line that does not fit is reported, never guessed.
// Names are the toolkit's IR tensor names, mostly the ONNX output tensor names (`keys: 'tensor'`);
// it adds converted copies with suffixes (`data_int8`, `fc7__float16`, `<gemm>_conv`) that the
// mapping strips (§12).
import { parseNumber } from './common.mjs';

export const id = 'rknn';
export const label = 'rknn-toolkit2 accuracy_analysis (error_analysis.txt)';
export const keys = 'tensor';

const GROUPS = [['simulator', 'entire'], ['simulator', 'single'], ['runtime', 'entire'], ['runtime', 'single_sim']];
const cosOf = ([side, col]) => `${side} ${col} cos`;
const eucOf = ([side, col]) => `${side} ${col} euc`;
// `core`: the value is the core's metric of that name ('cosine-similarity', §4) at the layer's output;
// `kind`: accumulated (everything quantized up to here) or own (this layer alone): the two columns
// of ptqscope's node errors, so the compare view pairs them.
const COS = {
  'simulator entire': { core: 'cosine-similarity', kind: 'accumulated' },
  'simulator single': { core: 'cosine-similarity', kind: 'own' },
  'runtime entire': { core: 'cosine-similarity' },
  'runtime single_sim': { core: 'cosine-similarity' },
};

export function detect(name, text) {
  if (/error_analysis\.txt$/i.test(name ?? '')) return true;
  return /simulator_error/.test(text) && /^\s*\[[^\]\s]+\]\s+\S/m.test(text);
}

const CELL = String.raw`(?:nan|-?inf|[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)`;
const PAIR_RE = new RegExp(String.raw`\s+(${CELL})\s*\|\s*(${CELL})\s*$`, 'i');
const ONE_RE = new RegExp(String.raw`\s+(${CELL})\s*$`, 'i');

export function parse(text) {
  const lines = text.split(/\r\n|\r|\n/);
  const problems = [];
  const rows = [];
  const headerAt = lines.findIndex((l) => /^\s*layer_name\b/.test(l));
  if (headerAt < 0) {
    problems.push({ line: 1, reason: 'no "layer_name" header line: not an error_analysis.txt table' });
    return { metrics: [], rows, problems };
  }
  const header = lines.slice(headerAt, headerAt + 4).join('\n');
  const paired = /\beuc\b/.test(header);
  const runtime = /runtime_error/.test(lines[headerAt]);
  const groups = runtime ? GROUPS : GROUPS.slice(0, 2);
  const metrics = [];
  for (const g of groups) {
    metrics.push({ name: cosOf(g), ...COS[g.join(' ')] });
    if (paired) metrics.push({ name: eucOf(g), better: 'lower' });
  }
  const cellRe = paired ? PAIR_RE : ONE_RE;
  for (let n = headerAt + 1; n < lines.length; n++) {
    const line = lines[n];
    const t = line.trim();
    if (!t || /^-{3,}$/.test(t) || t === '...' || t === '…' || t.startsWith('#')) continue;
    if (/^(entire|cos)\b/.test(t)) continue; // the header's second and third lines
    if (t.length > MAX_LINE) {
      problems.push({ line: n + 1, reason: `a line of ${t.length} characters: not a table row` });
      continue;
    }
    const m = /^\[([^\]]*)\]\s+(.*)$/.exec(t);
    if (!m) {
      problems.push({ line: n + 1, reason: `not a table row (expected "[OpType] name  cells"): ${clip(t)}` });
      continue;
    }
    // Cells from the end of the line, so names may contain spaces; at most one cell per column.
    let rest = m[2];
    const cells = [];
    for (let c; cells.length < groups.length && (c = cellRe.exec(rest)); ) {
      cells.unshift(c.slice(1));
      rest = rest.slice(0, c.index);
    }
    const layer = rest.trim();
    if (!layer) {
      problems.push({ line: n + 1, reason: `row without a layer name: ${clip(t)}` });
      continue;
    }
    // A '|' or a padded numeric-looking token left in the name: cells the patterns did not read.
    if (/\|/.test(layer) || /\s{2,}\S*\d/.test(layer)) {
      problems.push({ line: n + 1, reason: `unreadable metric cells in the row of ${JSON.stringify(layer.split(/\s+/)[0])}: ${clip(m[2])}` });
      continue;
    }
    const values = {};
    cells.forEach((cell, k) => {
      const cos = parseNumber(cell[0]);
      values[cosOf(groups[k])] = cos;
      if (paired) values[eucOf(groups[k])] = parseNumber(cell[1]);
    });
    rows.push({ layer, values, line: n + 1, info: { op: m[1] } });
  }
  return { metrics, rows, problems, generation: paired ? '1.6+' : '<=1.5' };
}

// Rows are a name and at most eight cells; a longer line is no row (and is not fed to the patterns).
const MAX_LINE = 4096;
const clip = (s) => (s.length > 80 ? `${s.slice(0, 77)}...` : s);
