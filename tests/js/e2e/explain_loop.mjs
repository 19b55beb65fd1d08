// "Why does it lose accuracy, and what is the cheapest cure", driven through the panels, shared by the
// page's and the plugin's Chromium tests on a planted-fault fixture (planted_clipping: one quantizer's
// threshold a tenth of its data's maximum, docs/explain.md): explain → the hints as rows and as a heat
// layer → a hint selected (its histogram) → Apply (what-if, with the held-out samples beside) → fix
// with threshold first, for the calibrated model → its export reopened → the calibration methods
// compared and the best exported. Playwright locators and DOM attributes only (Netron replaces
// window.eval); every number shown is checked against the wasm core run in Node on the same files.
import { expect } from 'vitest';
import { openSession, loadPtqModule, readCalibrationFolder } from '../helpers.mjs';
import { effectText, evidenceText } from '../../../web/app/explain/why_panel.mjs';
import { formatValue } from '../../../web/charts/format.mjs';
import { download, expectInWindow } from './window.mjs';

const MEAN = 'mean over outputs';
const COSINE = 'cosine-similarity';

// The mean's table of the what-if panel: {metric: {after, heldAfter}} (data-value texts).
// Waits for the what-if answer after `act()` (data-runs counts the answers; busy false: none pending).
async function answered(scope, act) {
  const panel = scope.locator('.ptq-whatif');
  const before = Number(await panel.getAttribute('data-runs') ?? 0);
  await act();
  await expect.poll(async () => Number(await panel.getAttribute('data-runs')) > before && await panel.getAttribute('data-busy') === 'false', { timeout: 120_000 }).toBe(true);
}

async function meanAfter(whatif) {
  const rows = whatif.locator(`.ptq-whatif-table[data-output="${MEAN}"] tbody tr`);
  const out = {};
  for (let i = 0; i < await rows.count(); i++) {
    const tr = rows.nth(i);
    const held = tr.locator('td[data-held-out="true"]');
    out[await tr.getAttribute('data-metric')] = {
      after: await tr.locator('td').nth(1).getAttribute('data-value'),
      heldAfter: await held.count() ? await held.nth(1).getAttribute('data-value') : null,
    };
  }
  return out;
}

/**
 * runExplainLoop(page, {scope, show, entry, readState(key), heatedCount(), selectionShown(name), thresholdShown(name), shot})
 * scope: the panels' container; show(id): make panel 'why' | 'whatif' | 'fix' | 'methods' visible;
 * readState(key): a JSON value of the host's store; heatedCount(): the graph's heat-coloured nodes;
 * selectionShown(name): waits until the host shows that node selected; thresholdShown(name): waits until
 * the host's graph shows that calibration node with a new threshold in effect; shot(name): a screenshot.
 */
export async function runExplainLoop(page, { scope, show, entry, readState, heatedCount, selectionShown, thresholdShown, shot }) {
  const { session } = await openSession(entry);
  try {
    const analyze = (request) => JSON.parse(session.analyze(JSON.stringify(request)));
    // The page's and the plugin's searches take every sample (interactive_default 0), split by the core.
    const hints = analyze({ analysis: 'explain', options: { data_num: 0 } });
    const first = hints.hints[0];
    expect(first.cause).toBe('clipping');

    // 1. Explain: one row per hint, in the core's order, with its cause, evidence, cure and effect.
    await show('why');
    const why = scope.locator('.ptq-why');
    await why.locator('.ptq-why-run').click();
    await scope.locator('.ptq-why[data-state="done"]').waitFor({ timeout: 300_000 });
    const rows = why.locator('.ptq-why-table tbody tr');
    expect(await rows.count()).toBe(hints.hints.length);
    for (let i = 0; i < hints.hints.length; i++) {
      const h = hints.hints[i];
      const row = rows.nth(i);
      expect(await row.getAttribute('data-cause')).toBe(h.cause);
      expect(await row.getAttribute('data-calibration')).toBe(h.calibration_node);
      expect(await row.locator('.ptq-why-suggestion').textContent()).toBe(h.suggestion.text);
      expect(await row.locator('.ptq-why-effect').textContent()).toBe(effectText({ ...h.effect, before: Number(h.effect.before), after: Number(h.effect.after), recovered: Number(h.effect.recovered) }));
    }
    expect(await rows.nth(0).locator('.ptq-why-evidence').textContent()).toBe(evidenceText(first.evidence));
    // The evidence and the cure are read as sentences: neither column is squeezed to a few letters.
    for (let i = 0; i < hints.hints.length; i++) {
      for (const cell of ['.ptq-why-evidence', '.ptq-why-suggestion']) {
        expect((await rows.nth(i).locator(cell).boundingBox()).width, `hint ${i + 1} ${cell}`).toBeGreaterThanOrEqual(100);
      }
    }
    expect(await why.locator('.ptq-why-summary').textContent()).toContain(`held out (${hints.hints_samples.held_out.join(', ')})`);
    // The hints colour the graph: exactly the nodes a hint names (the others stay uncoloured).
    expect((await readState('heatSettings')).view).toBe('hints');
    const hinted = new Set(hints.hints.map((h) => h.node));
    await expect.poll(heatedCount).toBe(hinted.size);

    // 2. A hint selected: its quantizer shown on the graph, its histogram with the threshold and the
    // clipped part, inside the window.
    await rows.nth(0).click();
    await selectionShown(first.calibration_node);
    const chart = why.locator('.ptq-why-detail svg');
    await chart.waitFor();
    expect(Number(await chart.locator('line.threshold').first().getAttribute('data-value'))).toBeCloseTo(Number(first.evidence.thresholds[0]), 6);
    expect(await chart.locator('path.bars-clipped').getAttribute('d')).not.toBe('');
    expect(await chart.locator('text.summary').first().textContent()).toMatch(/^clipped \d/);
    await expectInWindow(page, rows.nth(0).locator('.ptq-why-apply'), 'the first hint\'s Apply');
    await expectInWindow(page, chart, 'the hint histogram');
    if (shot) await shot('why');

    // 3. Apply: one change in the what-if view, marked as the hint's; with the held-out samples beside,
    // the numbers are the hint's effect (the same split of the same samples).
    await answered(scope, () => rows.nth(0).locator('.ptq-why-apply').click());
    await show('whatif');
    const whatif = scope.locator('.ptq-whatif');
    expect(await whatif.locator('.ptq-whatif-changes li').count()).toBe(1);
    expect(await whatif.locator('.ptq-whatif-changes li').first().textContent()).toBe(`${first.suggestion.node} → ${first.suggestion.text} (hint)`);
    await thresholdShown(first.calibration_node);
    // The suggestion as a configuration takes it (docs/explain.md): its measured values.
    const cure = { node: first.suggestion.node, action: first.suggestion.action, value: first.suggestion.value };
    const all = analyze({ analysis: 'what_if', options: { data_num: null }, config: { schema: 'ptqscope.config', version: 1, base: 'stored', intents: [cure] } });
    expect((await meanAfter(whatif))[COSINE].after).toBe(String(all.what_if.mean[COSINE]));
    await answered(scope, () => whatif.locator('.ptq-whatif-held-out').check());
    const split = await meanAfter(whatif);
    expect(split[COSINE].after).toBe(String(first.effect.after));
    expect(split[COSINE].heldAfter).toBe(String(first.effect.held_out.after));
    expect(await whatif.locator(`.ptq-whatif-table[data-output="${MEAN}"] caption`).textContent()).toContain(`held out: ${hints.hints_samples.held_out.length}`);
    await answered(scope, () => whatif.locator('.ptq-whatif-held-out').uncheck());

    // 4. Fix for the calibrated model: threshold first, the planted fault cured without raising a node.
    await show('fix');
    const fix = scope.locator('.ptq-fix');
    await fix.locator('select[name="export"]').selectOption('calibrated-onnx');
    expect(await fix.locator('input[name="prefer"]').inputValue()).toBe('threshold, int16, float');
    expect(await fix.locator('.ptq-fix-export-note').textContent()).toBe('can carry thresholds: threshold is tried first');
    await fix.locator('input[name="bound"]').fill('0.9999');
    await fix.locator('input[name="data_num"]').fill('');
    await fix.locator('.ptq-fix-run').click();
    await scope.locator('.ptq-fix:is([data-state="reached"], [data-state="not-reached"], [data-state="error"])').waitFor({ timeout: 300_000 });
    expect(await fix.getAttribute('data-state')).toBe('reached');
    // One node changed, by a threshold: none raised to int16 or float.
    const finalRows = fix.locator('.ptq-fix-final tbody tr');
    expect(await finalRows.count()).toBe(1);
    expect(await finalRows.first().locator('td').nth(1).textContent()).toBe('threshold');
    expect(await fix.locator('.ptq-fix-summary').textContent()).toMatch(/with 1 node raised \(1 threshold\)$/);
    const held = fix.locator('.ptq-fix-held-out');
    expect(await held.getAttribute('data-met')).toBe('true');
    expect(await held.textContent()).toMatch(new RegExp(`^On ${hints.hints_samples.held_out.length} held-out samples \\(${hints.hints_samples.held_out.join(', ')}\\): .* meets cosine-similarity`));
    await expectInWindow(page, held, 'the held-out line');
    expect(await fix.locator('.ptq-fix-warning').count()).toBe(0);
    if (shot) await shot('fix-threshold');

    // 5. Export: the fix's calibrated model, reopened in a new session, gives what the what-if view
    // shows for the fix applied (its thresholds written into the model).
    expect(await fix.locator('.ptq-config-format').inputValue()).toBe('calibrated-onnx');
    const exported = await download(page, () => fix.locator('.ptq-config-export').click());
    expect(exported.name.endsWith('.onnx')).toBe(true);
    await answered(scope, () => fix.locator('.ptq-fix-apply').click());
    await show('whatif');
    const fixed = await meanAfter(whatif);
    const ptq = await loadPtqModule();
    const reopened = new ptq.Session();
    try {
      reopened.loadModel(exported.bytes);
      reopened.loadCalibrationData(readCalibrationFolder(entry.data));
      const again = JSON.parse(reopened.analyze(JSON.stringify({ analysis: 'what_if', options: { data_num: null }, config: { schema: 'ptqscope.config', version: 1, base: 'stored', intents: [] } })));
      expect(again.what_if.mean[COSINE], 'the reopened model, as calibrated').toBe(Number(fixed[COSINE].after));
    } finally {
      reopened.delete();
    }

    // 6. Calibration methods for the whole model: a row per setting, the best marked, exported.
    await show('methods');
    const methods = scope.locator('.ptq-methods');
    await methods.locator('.ptq-methods-run').click();
    await scope.locator('.ptq-methods[data-state="done"]').waitFor({ timeout: 300_000 });
    const cm = analyze({ analysis: 'calibration_methods', options: { data_num: 0 } });
    const settingRows = methods.locator('.ptq-methods-table tbody tr');
    expect(await settingRows.count()).toBe(cm.calibration_methods.settings.length);
    const best = methods.locator('.ptq-methods-table tbody tr[data-best="true"]');
    expect(await best.getAttribute('data-setting')).toBe(cm.calibration_methods.best);
    expect(await best.locator('th').textContent()).toBe(`${cm.calibration_methods.best} ★ best`);
    const bestSetting = cm.calibration_methods.settings.find((s) => s.label === cm.calibration_methods.best);
    expect(await best.locator(`td[data-metric="${COSINE}"]`).first().textContent()).toBe(formatValue(bestSetting.tune[COSINE]));
    await methods.locator('.ptq-config-format').selectOption('horizon-quant-config');
    const quantConfig = await download(page, () => methods.locator('.ptq-config-export').click());
    expect(quantConfig.bytes.toString('utf8')).toBe(session.exportConfig(JSON.stringify(cm.config), 'horizon-quant-config'));
    await expectInWindow(page, best.locator('th'), 'the best setting');
    if (shot) await shot('calibration-methods');
    return { hints, fixed };
  } finally {
    session.delete();
  }
}
