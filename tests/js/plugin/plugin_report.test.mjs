// The plugin's "Toolchain report" section (the web app's Report panel) on the recorded Netron page: a
// Horizon converter log dropped on the section is placed on the nodes of the model Netron shows (the
// unnamed Relu and the renamed Conv included), Netron's node headers take the report's colours, the
// unplaced row is listed, and a model opened afterwards gets the same report placed again.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { installPlugin } from '../../../plugin/plugin.mjs';
import { nodeElementMap } from '../../../plugin/netron/nodes.mjs';
import { headerPath } from '../../../plugin/netron/contract.mjs';
import { coloredCount } from '../../../plugin/netron/decorate.mjs';
import { PANEL_ID } from '../../../plugin/ui/panel.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';
import { renderReportSection } from '../../../web/app/reports/sidebar.mjs';
import { netronPage, pluginDeps, until, settle, openModelThroughNetron } from './helpers.mjs';

const LOG = `2025-05-12 09:41:07,212 INFO The main quantized node information:
=====================================================================
Node                  ON   Subgraph  Type              Cosine Similarity  Threshold  DataType
---------------------------------------------------------------------
/backbone/conv1/Conv  BPU  id(0)     HzSQuantizedConv  0.999702           2.51       int8
Conv_0                BPU  id(0)     HzSQuantizedConv  0.998113           3.2        int8
Relu_11               BPU  id(0)     HzLut             0.997950           --         int8
/head/fc/Gemm         BPU  id(0)     HzSQuantizedConv  0.990415           4.7        int8
/backbone/conv3/Conv  BPU  id(0)     HzSQuantizedConv  0.996000           1.1        int8
`;
const COSINES = { '/backbone/conv1/Conv': 0.999702, Conv_0: 0.998113, Relu_11: 0.99795, '/head/fc/Gemm': 0.990415 };

describe('plugin: a toolchain report beside the model Netron shows', () => {
  let page;
  let plugin;
  let state;

  beforeAll(async () => {
    page = netronPage();
    // The sections plugin/entry.mjs gives the panel, the report's among them.
    plugin = installPlugin(page.window, pluginDeps({ sections: () => [{ id: 'report', title: 'Toolchain report', render: renderReportSection }] }));
    expect(plugin.ok).toBe(true);
    state = plugin.state;
    await openModelThroughNetron(page.window, page.view);
    await until(state, 'graph');
  });
  afterAll(() => plugin?.dispose?.());

  it('a log dropped on the section colours Netron\'s nodes and lists the unplaced row', async () => {
    const doc = page.document;
    const zone = doc.querySelector(`#${PANEL_ID} .ptq-report-drop`);
    expect(zone).not.toBeNull();
    const bytes = new TextEncoder().encode(LOG);
    const file = { name: 'hb_mapper_makertbin.log', size: bytes.length, arrayBuffer: async () => bytes.slice().buffer };
    const drop = new page.window.Event('drop', { bubbles: true, cancelable: true });
    Object.defineProperty(drop, 'dataTransfer', { value: { files: [file] } });
    zone.dispatchEvent(drop);
    const report = await until(state, 'report');
    expect(report.report.format).toBe('horizon');
    expect(report.mapped.unmatched).toEqual([{ layer: '/backbone/conv3/Conv', line: 9, reason: 'no node or tensor of that name' }]);
    expect(doc.querySelector(`#${PANEL_ID} .ptq-report-unmatched`).textContent).toContain('line 9: /backbone/conv3/Conv');

    await until(state, 'heat', (h) => h?.legend?.view === 'report');
    await settle();
    // A report's own metric ('cosine similarity') is coloured over the range of its values.
    const scale = heatScale('cosine-similarity', Object.values(COSINES), { scale: 'range' });
    const map = nodeElementMap(doc, state.get('graph'));
    for (const [node, v] of Object.entries(COSINES)) {
      expect(headerPath(map.get(node)).style.getPropertyValue('fill'), node).toBe(scale.color(v));
    }
    expect(coloredCount(doc)).toBe(Object.keys(COSINES).length);
    expect(doc.querySelector(`#${PANEL_ID} .ptq-heat-summary`).textContent).toContain('report (horizon): cosine similarity');
  });

  it('the selected node shows its report row', () => {
    state.set('selection', 'Conv_0');
    const section = page.document.querySelector(`#${PANEL_ID} .ptq-node-section[data-section="report"]`);
    expect(section.textContent).toContain('0.998113');
    expect(section.textContent).toContain('exact');
    state.set('selection', '/backbone/Add');
    expect(page.document.querySelector(`#${PANEL_ID} .ptq-node-section[data-section="report"]`).textContent).toContain('no row on this node');
  });

  it('the report follows a model opened afterwards', async () => {
    await openModelThroughNetron(page.window, page.view);
    await until(state, 'graph');
    expect(state.get('report').mapped.order.sort()).toEqual(Object.keys(COSINES).sort());
  });
});
