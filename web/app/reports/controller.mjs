// A toolchain report opened beside the model (web/pipeline/reports/: rknn-toolkit2 error_analysis.txt,
// Horizon's converter log, onnxruntime qdq_loss_debug JSON, AIMET per_layer_*.json, Netron metrics):
// state 'report' = {name, report (the parsed rows), mapped (rows → nodes), document (result-shaped:
// the heat view "report" and the compare view read it)} | null. The mapping follows the model: a
// report opened before the model, or kept when another model is opened, is mapped again.
// Env-neutral (no DOM): the web app and the Netron plugin both create one.
import { readReport } from '../../pipeline/reports/index.mjs';
import { mapReport } from '../../pipeline/reports/mapping.mjs';
import { reportDocument } from '../../pipeline/reports/document.mjs';

function build(name, report, graph) {
  const mapped = mapReport(report, graph);
  return { name, report, mapped, document: reportDocument(report, graph, mapped) };
}

// Reads one file ({path, bytes}) as a report and publishes it; false (and state 'error') when the
// file is not a report ptqscope reads. `format`: a format id to skip detection.
export function openReport(state, { path, bytes }, { format } = {}) {
  let report;
  try {
    report = readReport(path, bytes, { format });
  } catch (err) {
    state.set('error', err.message);
    return false;
  }
  const value = build(path, report, state.get('graph'));
  state.set('report', value);
  const first = report.metrics.find((m) => value.mapped.order.some((n) => m.name in value.mapped.nodes[n]));
  if (first) state.set('heatSettings', { ...state.get('heatSettings'), view: 'report', metric: first.name });
  return true;
}

export function createReportController(state) {
  const off = state.on('graph', (graph) => {
    const cur = state.get('report');
    if (cur) state.set('report', build(cur.name, cur.report, graph));
  });
  return { dispose: off };
}
