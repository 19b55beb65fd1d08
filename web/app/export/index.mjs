// The "Export" dock panel: results JSON (the CLI's schema), CSV tables, charts as SVG / PNG, the
// self-contained HTML report, Model Explorer node data and the Netron attachment.
import { registerPanel } from '../shell.mjs';
import { el } from '../analysis/forms.mjs';
import { resolveSettings } from '../heatmap/controller.mjs';
import { resultCsvFiles } from './csv.mjs';
import { modelExplorerNodeData } from './model_explorer.mjs';
import { netronAttachment } from './netron.mjs';
import { chartSvgFiles, chartPngFiles } from './charts.mjs';
import { download, zipFiles } from './download.mjs';
import { buildReport } from '../../report/report.mjs';

const JSON_TYPE = 'application/json';

function baseName(st) {
  return String(st.get('modelName') ?? 'model').replace(/\.onnx$/i, '') || 'model';
}

// A plain result document: the streaming marker dropped.
export function resultDocument(result) {
  const { partial, ...doc } = result ?? {};
  return { schema: 'ptqscope.result', version: 1, ...doc };
}

export const EXPORTS = [
  { id: 'json', label: 'Results JSON', run: (doc, st, r) => download(doc, `${baseName(st)}.ptqscope.json`, `${JSON.stringify(resultDocument(r), null, 2)}\n`, JSON_TYPE) },
  {
    id: 'csv', label: 'CSV tables (.zip)',
    run: (doc, st, r) => {
      const files = resultCsvFiles(r);
      if (files.length === 1) download(doc, files[0].name, files[0].text, 'text/csv');
      else download(doc, `${baseName(st)}.tables.zip`, zipFiles(files), 'application/zip');
    },
  },
  { id: 'svg', label: 'Charts SVG (.zip)', run: (doc, st, r) => download(doc, `${baseName(st)}.charts-svg.zip`, zipFiles(chartSvgFiles(doc, r, st.get('graph'))), 'application/zip') },
  { id: 'png', label: 'Charts PNG (.zip)', run: async (doc, st, r) => download(doc, `${baseName(st)}.charts-png.zip`, zipFiles(await chartPngFiles(doc, r, st.get('graph'))), 'application/zip') },
  {
    id: 'report', label: 'HTML report',
    run: (doc, st, r) => download(doc, `${baseName(st)}.report.html`,
      buildReport(resultDocument(r), { title: `ptqscope report — ${st.get('modelName') ?? 'model'}`, document: doc }), 'text/html'),
  },
  {
    id: 'model-explorer', label: 'Model Explorer node data',
    run: (doc, st, r) => {
      const s = resolveSettings(r, st.get('heatSettings') ?? {});
      const data = modelExplorerNodeData(r, st.get('graph'), s);
      download(doc, `${baseName(st)}.${s.view}.${s.metric}.node_data.json`, `${JSON.stringify(data, null, 2)}\n`, JSON_TYPE);
    },
  },
  { id: 'netron', label: 'Netron attachment', run: (doc, st, r) => download(doc, `${baseName(st)}.attachment.json`, `${JSON.stringify(netronAttachment(r, st.get('graph')), null, 2)}\n`, JSON_TYPE) },
];

function mountExportPanel(root, st) {
  const doc = root.ownerDocument;
  const box = el(doc, 'div', { class: 'ptq-export' });
  const note = el(doc, 'p', { class: 'ptq-hint' });
  root.append(box, note);
  for (const ex of EXPORTS) {
    const b = el(doc, 'button', { type: 'button', 'data-export': ex.id, text: ex.label });
    b.addEventListener('click', async () => {
      const r = st.get('results');
      if (!r) return st.set('error', 'Export: no results yet (run an analysis first)');
      try {
        await ex.run(doc, st, r);
      } catch (err) {
        st.set('error', `Export ${ex.label}: ${err.message}`);
      }
    });
    box.append(b);
  }
  const update = () => {
    const has = Boolean(st.get('results'));
    for (const b of box.querySelectorAll('button')) b.disabled = !has;
    note.textContent = has ? 'Model Explorer data follows the heatmap view and metric.' : 'Run an analysis to export its results.';
  };
  st.on('results', update);
  update();
}

registerPanel({ id: 'export', title: 'Export', mount: (el_, st) => mountExportPanel(el_, st) });
