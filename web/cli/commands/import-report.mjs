// `ptqscope import-report MODEL REPORT [--format ID] [--json FILE]` — reads another toolchain's
// per-layer report (rknn-toolkit2 error_analysis.txt, Horizon's converter log, onnxruntime
// qdq_loss_debug JSON, AIMET per_layer_*.json, Netron metrics JSON: web/pipeline/reports/), places
// its rows on the model's nodes by the rules of §12 and prints the
// table (each row with its node and the rule that placed it), the rows placed on no node with the
// reason, and the lines that could not be read (on stderr, as FILE:LINE: reason). --json writes the
// mapped report as a document the web app's compare view opens beside a result.
import { parseArgs } from '../lib/args.mjs';
import { UsageError, withContext } from '../lib/errors.mjs';
import { readModelFile, readTextInput } from '../lib/files.mjs';
import { checkOutputs, withOutputs, writeOutput } from '../lib/outputs.mjs';
import { loadPtqModule } from '../lib/wasm.mjs';
import { formatValue } from '../../charts/format.mjs';
import { REPORT_FORMATS, ReportError, readReport } from '../../pipeline/reports/index.mjs';
import { mapReport } from '../../pipeline/reports/mapping.mjs';
import { reportDocument } from '../../pipeline/reports/document.mjs';

export const summary = 'read another toolchain\'s per-layer report and place its rows on the model\'s nodes';
const formatLines = REPORT_FORMATS.map((f, k) => `${k ? ' '.repeat(19) : ''}${f.id.padEnd(9)}${f.label}`).join('\n');
export const usage = `usage: ptqscope import-report MODEL REPORT [--format ID] [--json FILE]

  MODEL            the model the report is about (calibrated, Q/DQ or float .onnx)
  REPORT           the report file
  --format ID      ${formatLines}
                   (default: detected from the file name and contents)
  --json FILE      write the mapped report (schema ptqscope.report) for the web app's compare view
  (docs/behaviour.md, "Toolchain reports": the formats and how rows are placed on nodes)`;

const SPEC = { positionals: ['MODEL', 'REPORT'], options: { format: {}, json: {} } };

// Columns padded to their widest cell (the last one not padded).
function table(header, rows) {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => String(r[c]).length)));
  return all.map((r) => r.map((cell, c) => (c + 1 < r.length ? String(cell).padEnd(widths[c]) : String(cell))).join('  ').trimEnd()).join('\n');
}

export async function main(argv, { stdout = process.stdout, stderr = process.stderr } = {}) {
  const { options, positionals } = parseArgs(argv, SPEC);
  const [modelPath, reportPath] = positionals;
  checkOutputs([{ path: options.json, kind: 'file', option: '--json' }]);
  if (options.format && !REPORT_FORMATS.some((f) => f.id === options.format)) {
    throw new UsageError(`--format: unknown report format '${options.format}' (known: ${REPORT_FORMATS.map((f) => f.id).join(', ')})`);
  }
  const text = readTextInput(reportPath, 'the report');
  let report;
  try {
    report = readReport(reportPath, text, { format: options.format });
  } catch (err) {
    if (err instanceof ReportError) throw new UsageError(err.message);
    throw err;
  }
  const modelBytes = readModelFile(modelPath);
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  let graph;
  try {
    const loaded = withContext(modelPath, () => session.loadModel(modelBytes));
    for (const w of loaded.warnings ?? []) stderr.write(`${modelPath}: warning: ${w}\n`);
    graph = JSON.parse(withContext(modelPath, () => session.graphJson()));
  } finally {
    session.delete();
  }
  const mapped = mapReport(report, graph);
  const cols = report.metrics.map((m) => m.name);
  const out = [];
  out.push(`${reportPath}: ${report.label}`);
  out.push(`${report.rows.length} rows: ${mapped.matched} placed on ${mapped.order.length} nodes of ${modelPath}, ${mapped.unmatched.length} not placed, ${report.problems.length} unreadable`);
  out.push(`metrics: ${report.metrics.map((m) => `${m.name} (${m.better} is better)`).join(', ') || 'none'}`);
  out.push('');
  out.push(table(['line', 'layer', 'node', 'rule', ...cols], mapped.rows.map((r) => [
    r.line ?? '', r.layer, r.node ? `${r.node}${r.used || !Object.keys(r.values ?? {}).length ? '' : ' (shows another row)'}` : '-', r.rule ?? '-',
    ...cols.map((c) => (c in (r.values ?? {}) ? formatValue(r.values[c]) : '')),
  ])));
  if (mapped.unmatched.length) {
    out.push('', `not placed on a node (${mapped.unmatched.length}):`);
    for (const u of mapped.unmatched) out.push(`  ${u.line ? `line ${u.line}: ` : ''}${u.layer}: ${u.reason}`);
  }
  stdout.write(`${out.join('\n')}\n`);
  for (const p of report.problems) stderr.write(`${reportPath}:${p.line ?? ''}: ${p.reason}\n`);
  if (options.json) {
    const doc = reportDocument(report, graph, mapped);
    await withOutputs(() => writeOutput(options.json, `${JSON.stringify(doc, null, 1)}\n`));
  }
  return 0;
}
