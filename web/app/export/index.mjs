// The app's "Export" dock panel (export/panel.mjs, also mounted by the Netron plugin).
import { registerPanel } from '../shell.mjs';
import { mountExportPanel } from './panel.mjs';

export { resultDocument, EXPORTS } from './panel.mjs';

registerPanel({ id: 'export', title: 'Export', mount: (el, st) => mountExportPanel(el, st) });
