// "Export for the toolchain": a configuration document written by the core in a toolchain's format
// (session.exportConfig in a worker, docs/config-export.md: the page, the plugin and the CLI give the
// same bytes). The formats, their file name suffixes, media types and labels are the core's
// (describe().export_formats, via catalog.mjs). Mounted under the what-if and the fix panels.
import { el, selectValue } from '../analysis/forms.mjs';
import { EXPORT_FORMATS, exportFormat } from '../../pipeline/catalog.mjs';

const baseName = (state) => String(state.get('modelName') ?? 'model').replace(/\.onnx$/i, '') || 'model';

// The format a model's export starts at: a Q/DQ model (§1.11) its own model with the configuration
// applied (qdq-onnx); another model `current`, unless that is qdq-onnx (then the first format).
export function preferredFormat(graph, current) {
  const qdq = (graph?.nodes ?? []).some((n) => n.calibration?.qdq_nodes?.length);
  if (qdq && EXPORT_FORMATS.some((f) => f.name === 'qdq-onnx')) return 'qdq-onnx';
  return current === 'qdq-onnx' || !current ? EXPORT_FORMATS[0].name : current;
}

/**
 * mountConfigExport(root, state, runner, {getConfig, save, label}) -> {element, exportAs(format), select(format), dispose()}
 * getConfig(): the document to export (null: nothing to export yet); save(name, data, type).
 */
export function mountConfigExport(root, state, runner, { getConfig, save, label = 'Export' }) {
  const doc = root.ownerDocument;
  const format = el(doc, 'select', { class: 'ptq-config-format', 'aria-label': 'toolchain format' },
    ...EXPORT_FORMATS.map((f) => el(doc, 'option', { value: f.name, text: f.label })));
  const button = el(doc, 'button', { type: 'button', class: 'ptq-config-export', text: label });
  const note = el(doc, 'span', { class: 'ptq-config-export-note', 'aria-live': 'polite' });

  async function exportAs(id) {
    const f = exportFormat(id);
    const config = getConfig();
    if (!config) throw new Error('export: there is no configuration yet');
    const { data } = await runner.call('exportConfig', { config, format: id });
    const name = `${baseName(state)}${f.suffix}`;
    await save(name, data, f.media_type);
    note.textContent = `saved ${name}`;
    return { name, data };
  }
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      note.removeAttribute('data-error');
      await exportAs(format.value);
    } catch (err) {
      // Beside the button, where it was asked (a format that cannot carry the configuration says which
      // to take); not the page's error banner: the page is fine.
      note.textContent = err.message ?? String(err);
      note.setAttribute('data-error', 'true');
    } finally {
      button.disabled = false;
    }
  });
  const element = el(doc, 'div', { class: 'ptq-field ptq-config-export-row' }, format, button, note);
  root.append(element);
  // A Q/DQ model (§1.11) is offered its own model with the configuration applied first.
  const preselect = (graph) => {
    selectValue(format, preferredFormat(graph, format.value));
  };
  preselect(state.get('graph'));
  const off = state.on?.('graph', preselect);
  // select(name): start at that format (the one a fix was searched for); null leaves the choice, an
  // unknown name throws naming the known ones.
  const select = (name) => {
    if (name) selectValue(format, exportFormat(name).name);
  };
  return { element, exportAs, select, dispose: () => { off?.(); element.remove(); } };
}
