// Heatmap overlay: keeps state 'heat' in step with the results, a dock panel to choose the view
// (node / weight / activation / leave-one-out) and metric with its legend (panel.mjs, also mounted by
// the Netron plugin), and the node sidebar section with that node's rows and charts.
import { state } from '../state.mjs';
import { registerPanel, registerSidebarSection } from '../shell.mjs';
import { heatScale } from '../../charts/heat_scale.mjs';
import { createHeatController } from './controller.mjs';
import { renderNodeSection } from './sidebar.mjs';
import { mountHeatPanel } from './panel.mjs';

export { mountHeatPanel };
export const heatController = createHeatController(state, heatScale);

registerPanel({ id: 'heatmap', title: 'Heatmap', mount: (el, st) => mountHeatPanel(el, st) });
registerSidebarSection({ id: 'analysis-results', title: 'Analysis results', render: renderNodeSection });
