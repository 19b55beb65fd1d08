// Reports of other toolchains, read beside a model (§12): one module
// per format, each exporting {id, label, keys, detect(name, text), parse(text, name)}:
//   keys   what the report's layer names are: 'node' (ONNX node names) or 'tensor' (tensor names);
//          the mapping (mapping.mjs) tries that kind first
//   detect whether a file (name, text) is of this format
//   parse  -> {metrics: [{name, better | core, kind?}], rows: [{layer, values: {metric: number}, line,
//             info?}], problems: [{line, reason}]}; never throws: a row it cannot read is a problem
//             with its 1-based line (null when the format has no lines for it)
// A metric's direction is declared once, in its format module: `core: '<metric>'` when the value is
// one of the core's metrics (§4: its direction is the core's), else `better: 'higher' | 'lower'`.
// Shared by the CLI (import-report), the web app and the Netron plugin. Pure: no DOM, no Node APIs.
import * as aimet from './aimet.mjs';
import * as netron from './netron.mjs';
import * as ortQdq from './ort_qdq.mjs';
import * as horizon from './horizon.mjs';
import * as rknn from './rknn.mjs';
import { metricBetter, textOf } from './common.mjs';

// Detection order: file-name formats first (AIMET's flat JSON says nothing about itself), then
// signatures and keys, then the text tables.
export const REPORT_FORMATS = [aimet, netron, ortQdq, horizon, rknn];

export const reportFormat = (id) => REPORT_FORMATS.find((f) => f.id === id) ?? null;

// The format of a file, or null. Files whose text has NUL bytes are binary: no report.
export function detectFormat(name, text) {
  if (text.includes('\u0000')) return null;
  return REPORT_FORMATS.find((f) => {
    try {
      return f.detect(name, text);
    } catch {
      return false;
    }
  }) ?? null;
}

export class ReportError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ReportError';
  }
}

const known = () => REPORT_FORMATS.map((f) => f.id).join(', ');

/**
 * readReport(name, input, {format}) -> {name, format, label, keys, metrics: [{name, better, core?,
 * kind?}], rows, problems}. input: bytes or text. format: a format id to skip detection.
 * Throws ReportError (naming the file) when the format is unknown or cannot be detected; a file of a
 * known format never throws, whatever it holds: what cannot be read is in `problems`.
 */
export function readReport(name, input, { format } = {}) {
  const text = textOf(input);
  let f;
  if (format) {
    f = reportFormat(format);
    if (!f) throw new ReportError(`${name}: unknown report format '${format}' (known: ${known()})`);
  } else {
    f = detectFormat(name, text);
    if (!f) {
      throw new ReportError(`${name}: not a report ptqscope reads (${REPORT_FORMATS.map((x) => x.label).join('; ')})`);
    }
  }
  let parsed;
  try {
    parsed = f.parse(text, name);
  } catch (err) {
    parsed = { metrics: [], rows: [], problems: [{ line: null, reason: `the ${f.id} reader failed: ${err.message}` }] };
  }
  const metrics = parsed.metrics.map((m) => ({ ...m, better: metricBetter(m) }));
  return { name, format: f.id, label: f.label, keys: f.keys, metrics, rows: parsed.rows, problems: parsed.problems };
}
