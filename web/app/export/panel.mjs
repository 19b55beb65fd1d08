// The export panel: results JSON (the CLI's schema), CSV tables, charts as SVG / PNG, the
// self-contained HTML report, Model Explorer node data and the Netron attachment. Mounted by the app's
// dock ("Export", index.mjs) and by the Netron plugin; the host may pass `hooks.save(name, data, type)`
// (default: a browser download of a Blob).
import { el } from '../analysis/forms.mjs';
import { resolveSettings } from '../heatmap/controller.mjs';
import { resultCsvFiles } from './csv.mjs';
import { modelExplorerNodeData } from './model_explorer.mjs';
import { netronAttachment } from './netron.mjs';
import { chartSvgFiles, chartPngFiles } from './charts.mjs';
import { download, zipFiles } from './download.mjs';
import { buildReport } from '../../report/report.mjs';
import { reportGraph } from '../graph/picture.mjs';

const JSON_TYPE = 'application/json';
const ZIP_TYPE = 'application/zip';
const json = (value) => `${JSON.stringify(value, null, 2)}\n`;

function baseName(st) {
  return String(st.get('modelName') ?? 'model').replace(/\.onnx$/i, '') || 'model';
}

// A plain result document: the streaming marker dropped.
export function resultDocument(result) {
  const { partial, ...doc } = result ?? {};
  return { schema: 'ptqscope.result', version: 1, ...doc };
}

// Each export makes one file {name, data, type} from the document, the store and the results.
export const EXPORTS = [
  { id: 'json', label: 'Results JSON', file: (doc, st, r) => ({ name: `${baseName(st)}.ptqscope.json`, data: json(resultDocument(r)), type: JSON_TYPE }) },
  {
    id: 'csv', label: 'CSV tables (.zip)',
    file: (doc, st, r) => {
      const files = resultCsvFiles(r);
      return files.length === 1 ? { name: files[0].name, data: files[0].text, type: 'text/csv' }
        : { name: `${baseName(st)}.tables.zip`, data: zipFiles(files), type: ZIP_TYPE };
    },
  },
  { id: 'svg', label: 'Charts SVG (.zip)', file: (doc, st, r) => ({ name: `${baseName(st)}.charts-svg.zip`, data: zipFiles(chartSvgFiles(doc, r, st.get('graph'))), type: ZIP_TYPE }) },
  { id: 'png', label: 'Charts PNG (.zip)', file: async (doc, st, r) => ({ name: `${baseName(st)}.charts-png.zip`, data: zipFiles(await chartPngFiles(doc, r, st.get('graph')), { level: 0 }), type: ZIP_TYPE }) },
  {
    id: 'report', label: 'HTML report',
    file: (doc, st, r) => ({
      name: `${baseName(st)}.report.html`, type: 'text/html',
      // With a picture of the graph as coloured now (the heat view shown, the what-if configuration in effect).
      data: buildReport(resultDocument(r), {
        title: `ptqscope report — ${st.get('modelName') ?? 'model'}`, document: doc,
        graph: reportGraph({ graph: st.get('graph'), heat: st.get('heat'), states: st.get('calibrationStates'), document: doc }),
      }),
    }),
  },
  {
    id: 'model-explorer', label: 'Model Explorer node data',
    file: (doc, st, r) => {
      const s = resolveSettings(r, st.get('heatSettings') ?? {});
      return { name: `${baseName(st)}.${s.view}.${s.metric}.node_data.json`, data: json(modelExplorerNodeData(r, st.get('graph'), s)), type: JSON_TYPE };
    },
  },
  { id: 'netron', label: 'Netron attachment', file: (doc, st, r) => ({ name: `${baseName(st)}.attachment.json`, data: json(netronAttachment(r, st.get('graph'))), type: JSON_TYPE }) },
];

/**
 * mountExportPanel(root, state, hooks?) -> {element, dispose()}
 * One button per EXPORTS entry, enabled once state 'results' holds a document.
 */
export function mountExportPanel(root, st, { save } = {}) {
  const doc = root.ownerDocument;
  const write = save ?? ((name, data, type) => download(doc, name, data, type));
  const box = el(doc, 'div', { class: 'ptq-export' });
  const note = el(doc, 'p', { class: 'ptq-hint' });
  root.append(box, note);
  for (const ex of EXPORTS) {
    const b = el(doc, 'button', { type: 'button', 'data-export': ex.id, text: ex.label });
    b.addEventListener('click', async () => {
      const r = st.get('results');
      if (!r) return st.set('error', 'Export: no results yet (run an analysis first)');
      try {
        const { name, data, type } = await ex.file(doc, st, r);
        await write(name, data, type);
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
  const off = st.on('results', update);
  update();
  return {
    element: box,
    dispose() {
      off();
      box.remove();
      note.remove();
    },
  };
}
