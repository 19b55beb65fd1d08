// End to end in Chromium: a toolchain report opened beside the example model in dist/ptqscope.html
// (file://): the rknn error_analysis.txt through the top bar's Report… picker, then Horizon's log
// dropped on the page. The heat layer colours exactly the nodes the rows were placed on (and the
// consumers of a calibration node), with the direction of the metric chosen; the Report panel lists
// the rows, the unplaced rows and the unreadable lines; the Compare panel pairs the report's cosine
// with ptqscope's own node errors (the CLI's --json on the same model and data).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers.mjs';
import { openApp, openPanel as openDockPanel, cliJson } from './browser.mjs';

const EXAMPLE = path.join(REPO_ROOT, 'build/web-example');
const REPORTS = path.join(REPO_ROOT, 'tests/fixtures/reports');
const ARTIFACTS = path.join(REPO_ROOT, 'build/test-results/e2e-report');

let context;
let page;
let offline = [];
let pageErrors = [];
const openPanel = (id) => openDockPanel(page, id);

// {node name: fill} of the graph's coloured nodes.
const heated = () => page.$$eval('#graph .heated', (gs) => Object.fromEntries(gs.map((g) => [g.dataset.name, g.querySelector('.node-body').style.fill])));

beforeAll(async () => {
  if (!fs.existsSync(EXAMPLE)) throw new Error(`${EXAMPLE} is missing: build the web app first (scripts/build.sh web)`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  ({ context, page, offline, pageErrors } = await openApp());
  await page.click('#open-example');
  await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info')?.textContent ?? ''));
});

afterAll(async () => {
  await context?.close();
});

describe('a toolchain report beside the model', () => {
  it('Report…: heat layer on the placed nodes, the table, unplaced rows and unreadable lines', async () => {
    await page.setInputFiles('#open-report', path.join(REPORTS, 'error_analysis.txt'));
    await page.waitForFunction(() => window.ptqscope.state.get('report')?.name === 'error_analysis.txt');
    await openPanel('report');
    const rows = await page.$$eval('.ptq-report-rows tbody tr', (trs) => trs.map((tr) => [tr.dataset.layer, tr.dataset.node]));
    expect(rows).toHaveLength(15);
    expect(rows).toContainEqual(['logits_conv', '/fc/Gemm']);
    expect(rows).toContainEqual(['/head/Softmax_output_0', '']);
    expect(await page.textContent('.ptq-report-unmatched')).toContain('line 26: /head/Softmax_output_0');
    const problems = await page.textContent('.ptq-report-problems');
    expect(problems).toContain('line 27: unreadable metric cells');
    expect(problems).toContain('line 28: not a table row');
    await page.screenshot({ path: path.join(ARTIFACTS, 'rknn-report-panel.png') });

    // The heat view "report" with the first metric (simulator entire cos): the rows' nodes, plus the
    // consumer of the input's calibration node (/features/features.0/Conv: its own rknn row is a fused
    // one without values); the viewer draws calibration nodes as badges, not as graph nodes.
    const expected = ['/features/features.0/Conv', '/features/features.2/Relu', '/features/features.5/Relu',
      '/features/features.6/MaxPool', '/features/features.7/Conv', '/features/features.9/Relu', '/features/features.10/MaxPool',
      '/Flatten', '/fc/Gemm'];
    await expect.poll(async () => Object.keys(await heated()).sort()).toEqual([...expected].sort());
    const heatKeys = await page.evaluate(() => [...window.ptqscope.state.get('heat').values.keys()].sort());
    expect(heatKeys).toEqual([...expected, 'input_HzCalibration'].sort());
    await openPanel('heatmap');
    await expect.poll(() => page.textContent('.ptq-heat-legend')).toMatch(/lower is worse/);
    expect(await page.textContent('.ptq-heat-summary')).toContain('report (rknn): simulator entire cos');

    // Euclidean distance: higher is worse, and the largest (3.9102, /features/features.7/Conv) is the hottest.
    await openPanel('report');
    await page.click('.ptq-report-metrics button[data-metric="simulator entire euc"]');
    await openPanel('heatmap');
    await expect.poll(() => page.textContent('.ptq-heat-legend')).toMatch(/higher is worse/);
    const heat = await page.evaluate(() => Object.fromEntries([...window.ptqscope.state.get('heat').values].map(([k, v]) => [k, v.value])));
    const worst = Object.entries(heat).sort((a, b) => b[1] - a[1])[0][0];
    expect(worst).toBe('/features/features.7/Conv');
    const fills = await heated();
    const worstColor = await page.evaluate(() => window.ptqscope.state.get('heat').legend.stops.at(-1).color);
    expect(fills['/features/features.7/Conv'].replace(/\s/g, '')).toBe(worstColor.replace(/\s/g, ''));
    await page.screenshot({ path: path.join(ARTIFACTS, 'rknn-euclidean-heat.png') });

    // The node sidebar: the rows placed on the selected node.
    await page.evaluate(() => window.ptqscope.state.set('selection', '/fc/Gemm'));
    await expect.poll(() => page.textContent('#sidebar')).toContain('logits_conv');
    const side = await page.textContent('#sidebar');
    expect(side).toContain('the node shows another row');
    expect(side).toContain('2.4431');
  });

  it('a report dropped on the page replaces the first one (Horizon log: node names, truncated name)', async () => {
    const text = fs.readFileSync(path.join(REPORTS, 'hb_mapper_makertbin.log'), 'utf8');
    await page.evaluate((body) => {
      const dt = new DataTransfer();
      dt.items.add(new File([body], 'hb_mapper_makertbin.log', { type: 'text/plain' }));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, text);
    await page.waitForFunction(() => window.ptqscope.state.get('report')?.name === 'hb_mapper_makertbin.log');
    await openPanel('report');
    const rows = await page.$$eval('.ptq-report-rows tbody tr', (trs) => trs.map((tr) => [tr.dataset.layer, tr.dataset.node]));
    expect(rows).toContainEqual(['...atures/features.9/Relu', '/features/features.9/Relu']);
    expect(await page.textContent('.ptq-report-unmatched')).toContain('/features/features.1/BatchNormalization');
    await expect.poll(async () => Object.keys(await heated())).toContain('/features/features.9/Relu');
    expect(Object.keys(await heated())).not.toContain('/Flatten'); // its cosine is "--"
  });

  it('Compare: the report against ptqscope node errors of the same model, measured as the converter does', async () => {
    const model = fs.readdirSync(EXAMPLE).find((f) => f.endsWith('.onnx'));
    const nodeErrors = async (measure) => {
      const ne = await cliJson('node-errors', path.join(EXAMPLE, model), path.join(EXAMPLE, 'calibration_data'), ['--measure', measure]);
      const file = path.join(ARTIFACTS, `node-errors-${measure}.json`);
      fs.writeFileSync(file, JSON.stringify(ne));
      return file;
    };
    await openPanel('compare');
    // Node errors at node outputs do not pair with the log (another measure): the summary says why.
    await page.setInputFiles('.ptq-compare-file-a', await nodeErrors('output'));
    await page.click('.ptq-compare-report-b');
    await expect.poll(() => page.textContent('.ptq-compare-summary')).toMatch(/have no per-node table in common\. A's node errors are measured at node outputs and B's as the Horizon converter log measures them/);
    await page.setInputFiles('.ptq-compare-file-a', await nodeErrors('converter'));
    await page.selectOption('.ptq-compare-source', 'node_errors:converter:accumulated');
    await expect.poll(() => page.textContent('.ptq-compare-summary')).toMatch(/^3 matched/);
    const rows = await page.$$eval('.ptq-compare-rows tbody tr', (trs) => trs.map((tr) => [tr.dataset.item, tr.children[2].textContent]));
    expect(rows.map((r) => r[0]).sort()).toEqual(['/features/features.0/Conv', '/features/features.3/Conv', '/features/features.7/Conv']);
    expect(rows.find((r) => r[0] === '/features/features.7/Conv')[1]).toBe('0.994552');
    expect(await page.textContent('.ptq-compare-only-b')).toContain('/features/features.2/Relu');
    // The change is a heat view on the graph.
    await expect.poll(async () => Object.keys(await heated()).sort()).toEqual(['/features/features.0/Conv', '/features/features.3/Conv', '/features/features.7/Conv']);

    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(pageErrors).toEqual([]);
    expect(offline).toEqual([]);
  });

  it('a file that is no report: the banner names it, the page stays usable', async () => {
    await page.setInputFiles('#open-report', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('just some notes\n') });
    await expect.poll(() => page.textContent('#error-banner .error-text')).toMatch(/^notes\.txt: not a report ptqscope reads/);
    expect(await page.evaluate(() => window.ptqscope.state.get('report')?.name)).toBe('hb_mapper_makertbin.log');
    expect(pageErrors).toEqual([]);
  });
});
