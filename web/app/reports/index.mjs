// Toolchain reports beside the model in the page: the dock tab "Report" (panel.mjs), the node sidebar's
// rows of the selected node (sidebar.mjs) and the controller
// that keeps state 'report' mapped onto the model shown (controller.mjs). Files dropped or picked
// with the model are routed here by web/app/open/open.mjs.
import './reports.css';
import { state } from '../state.mjs';
import { registerPanel, registerSidebarSection } from '../shell.mjs';
import { createReportController } from './controller.mjs';
import { mountReportPanel } from './panel.mjs';
import { renderReportSection } from './sidebar.mjs';

export { mountReportPanel };
export const reportController = createReportController(state);

registerPanel({ id: 'report', title: 'Report', mount: (el, st) => mountReportPanel(el, st) });
registerSidebarSection({ id: 'report', title: 'Toolchain report', render: renderReportSection });
