// The diagnosis-to-fix loop driven through the panels, shared by the page's and the plugin's Chromium
// tests: a node sweep, what-if toggles with undo (before / after numbers), each node's own and
// accumulated error with the path chart and "go to the first node crossing X", the fix search (once
// cancelled, then run to the end) with its path chart, applied to the what-if view, the toolchain
// export, and the comparison of two results. Playwright locators
// and DOM attributes only (no page.evaluate): Netron replaces window.eval, so the same steps run in the
// real Netron. Every number the page shows is checked against the wasm core run in Node on the same
// files with the same configuration document (saved from the page).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { openSession } from '../helpers.mjs';
import { cli } from '../cli_fixture.mjs';
import { findPath, pathSeries } from '../../../web/app/whatif/path.mjs';
import { stepLabel } from '../../../web/charts/fix_path.mjs';
import { ellipsize } from '../../../web/charts/format.mjs';
import { exportFormat } from '../../../web/pipeline/catalog.mjs';
import { download, expectInWindow } from './window.mjs';
import { expectCheckShows, expectedCheck, runCheck } from './onnxruntime_check.mjs';

const MEAN = 'mean over outputs';
const RUNALL_SECTIONS = ['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis'];

// The page's before / after table of one output: {metric: {before, after}} (texts).
async function numbers(scope, output = MEAN) {
  const rows = scope.locator(`.ptq-whatif-table[data-output="${output}"] tbody tr`);
  const out = {};
  for (let i = 0; i < await rows.count(); i++) {
    const tr = rows.nth(i);
    out[await tr.getAttribute('data-metric')] = {
      before: await tr.locator('td').nth(0).getAttribute('data-value'),
      after: await tr.locator('td').nth(1).getAttribute('data-value'),
    };
  }
  return out;
}

// The page's and the plugin's what-if / fix requests judge every sample (describe()'s
// interactive_default of data_num: a request's null).
const ALL_SAMPLES = { data_num: null };

// The calibration nodes a resolved configuration document puts in another state than the model
// stores: [[name, 'int16' | 'float']] (what the graph must show for them).
function changedStates(summary, resolved) {
  return summary.calibrations.flatMap((c) => {
    const s = resolved.calibrations[c.name];
    const stored = { on: c.switch === true, qtype: c.qtype };
    if (!s || (s.on === stored.on && (!s.on || s.qtype === stored.qtype))) return [];
    return [[c.name, s.on ? s.qtype : 'float']];
  });
}

/**
 * runLoop(page, {scope, show, entry, sweepDone, exportAs, cancelFix, configShown})
 * scope: a locator of the panels' container (the page's body, the plugin's dock); show(id): make the
 * panel 'analyses' | 'whatif' | 'fix' | 'compare' visible (the page's dock tabs; the plugin shows all);
 * entry: the fixture (model, data); sweepDone(): waits until the analyses panel's run has finished;
 * exportAs: the toolchain format exported after the fix (default horizon-yaml; qdq-onnx for a Q/DQ
 * or QOperator model, whose own model is its natural target); cancelFix: cancel a first fix search
 * (default true); configShown(calibration node, text): waits until the host's graph shows that
 * calibration node in that state ('int16', 'float': the page's badge, Netron's node label);
 * onnxruntime: 'check' (press "Check with onnxruntime" in the fix panel and, the fix applied, in the
 * what-if panel, and check the numbers shown: onnxruntime_check.mjs) or 'unavailable' (the host
 * carries no onnxruntime-web: the button is disabled and the panel says why); default: neither.
 * Returns what it saw, for the caller's own checks.
 */
export async function runLoop(page, { scope, show, entry, sweepDone, exportAs = 'horizon-yaml', cancelFix = true, configShown, onnxruntime }) {
  const { ptq, session, summary, data } = await openSession(entry);
  try {
    const analyze = (request) => JSON.parse(session.analyze(JSON.stringify(request)));
    const sampleCount = data.sampleCount;

    // 1. The node sweep, most sensitive first.
    await show('analyses');
    await scope.locator('.ptq-analysis-tabs button[data-analysis="sensitivity"]').click();
    const form = scope.locator('form.ptq-analysis-form[data-analysis="sensitivity"]');
    await form.locator('select[name="node_type"]').selectOption('node');
    await scope.locator('.ptq-run').click();
    await sweepDone();
    const items = [];
    const trs = scope.locator('.ptq-analysis-output table.sensitivity-table tbody tr');
    for (let i = 0; i < Math.min(2, await trs.count()); i++) items.push(await trs.nth(i).getAttribute('data-item'));
    expect(items).toHaveLength(2);

    // 2. What-if: the most sensitive node to int16, the second to float, then undo the second.
    const whatif = scope.locator('.ptq-whatif');
    const runs = async (n) => {
      await scope.locator(`.ptq-whatif[data-runs="${n}"][data-busy="false"]`).waitFor({ timeout: 120_000 });
    };
    const toggle = async (item, action, n) => {
      await show('analyses');
      await scope.locator(`.ptq-analysis-output table.sensitivity-table tbody tr[data-item="${item}"]`).click();
      await show('whatif');
      await expect.poll(() => whatif.locator('.ptq-whatif-targets').textContent()).toBe(item);
      await whatif.locator(`.ptq-whatif-action[data-action="${action}"]`).click();
      await runs(n);
    };
    // "Before" is the starting configuration (as calibrated), from the very first change on.
    const asCalibrated = analyze({ analysis: 'what_if', options: ALL_SAMPLES, config: { schema: 'ptqscope.config', version: 1, base: 'stored', intents: [] } });
    await toggle(items[0], 'int16', 1);
    const first = await numbers(whatif);
    for (const [m, v] of Object.entries(asCalibrated.what_if.mean)) expect(first[m].before, m).toBe(String(v));
    // Every number says what it was computed on: all the samples, by default.
    expect(await whatif.locator('.ptq-whatif-table caption').first().textContent()).toContain(`${sampleCount} of ${sampleCount} samples`);
    await toggle(items[1], 'float', 2);
    const second = await numbers(whatif);
    for (const m of Object.keys(first)) expect(second[m].before, m).toBe(first[m].before);
    expect(await whatif.locator('.ptq-whatif-changes li').count()).toBe(2);
    await whatif.locator('.ptq-whatif-undo').click();
    await runs(3);
    const undone = await numbers(whatif);
    for (const m of Object.keys(first)) expect(undone[m].after, m).toBe(first[m].after);

    // The configuration the page holds, saved as a file, gives the same numbers in Node.
    const saved = await download(page, () => whatif.locator('.ptq-whatif-save').click());
    const config = JSON.parse(saved.bytes.toString('utf8'));
    expect(config).toMatchObject({ schema: 'ptqscope.config', base: 'stored', intents: [{ node: items[0], action: 'int16' }] });
    const ref = analyze({ analysis: 'what_if', options: ALL_SAMPLES, config });
    for (const [m, v] of Object.entries(ref.what_if.mean)) expect(undone[m].after, m).toBe(String(v));
    // The graph shows the configuration in effect: the node's calibration nodes at int16.
    const changed = changedStates(summary, ref.config);
    expect(changed.length, 'the change switches some calibration node').toBeGreaterThan(0);
    if (configShown) for (const [name, text] of changed) await configShown(name, text);

    // 3. Own and accumulated errors: the path chart and the first node crossing X.
    await whatif.locator('.ptq-node-errors-run').click();
    await scope.locator('.ptq-whatif[data-node-errors="1"]').waitFor({ timeout: 120_000 });
    await whatif.locator('.ptq-path-chart svg path.curve').first().waitFor();
    const errors = analyze({ analysis: 'node_errors', options: ALL_SAMPLES, config });
    const graph = JSON.parse(session.graphJson());
    const series = pathSeries(errors.node_errors, findPath(graph, {}));
    // X between the best and the worst accumulated value on the path: some node crosses it.
    const finite = series.accumulated.filter(Number.isFinite);
    const bound = (Math.max(...finite) + Math.min(...finite)) / 2;
    const expected = series.x[series.accumulated.findIndex((v) => v < bound)];
    await whatif.locator('.ptq-path-bound').fill(String(bound));
    await whatif.locator('.ptq-path-goto').click();
    await expect.poll(() => whatif.locator('.ptq-path-note').getAttribute('data-node')).toBe(expected);

    // 4. Compare: these errors (A) against the same after the fix (B), below.
    await show('compare');
    const compare = scope.locator('.ptq-compare');
    await compare.locator('.ptq-compare-current-a').click();

    // 5. Fix, on every sample by default: tuned on every other one (§13.4), the rest held out. The
    // target lies between the tuning samples' start and 1 (reachable: all float gives 1).
    const tuning = analyze({ analysis: 'what_if', options: { ...ALL_SAMPLES, held_out: true }, config });
    const tuneCount = tuning.what_if.samples.length;
    expect(tuneCount).toBe(Math.ceil(sampleCount / 2));
    const start = Number(tuning.what_if.mean['cosine-similarity']);
    const target = Math.min(0.99999, start + (1 - start) / 2);
    await show('fix');
    const fix = scope.locator('.ptq-fix');
    await fix.locator('input[name="bound"]').fill(String(target));
    expect(await fix.locator('input[name="data_num"]').inputValue()).toBe('');
    // Cancel while the search runs: it stops, says so, and offers nothing to apply or export; the next
    // search runs to the end. (Not after its first step: the candidate ranking takes most of a search,
    // and on ppocr_cls the steps after the first follow within the click's latency. A tiny model's
    // whole search can end within it: cancelFix false.)
    if (cancelFix) {
      await fix.locator('.ptq-fix-run').click();
      await fix.locator('.ptq-fix-cancel').click();
      await scope.locator('.ptq-fix[data-state="cancelled"]').waitFor({ timeout: 60_000 });
      await expect.poll(() => fix.locator('.ptq-fix-progress-text').textContent()).toBe('Fix: cancelled');
      expect(await fix.locator('.ptq-fix-summary').count()).toBe(0);
      expect(await fix.locator('.ptq-fix-chart svg').count()).toBe(0);
      expect(await fix.locator('.ptq-fix-apply').isDisabled()).toBe(true);
      expect(await fix.locator('.ptq-fix-cancel').isDisabled()).toBe(true);
    }

    await fix.locator('.ptq-fix-run').click();
    await scope.locator('.ptq-fix:is([data-state="reached"], [data-state="not-reached"], [data-state="error"])').waitFor({ timeout: 300_000 });
    expect(await fix.getAttribute('data-state')).toBe('reached');
    // The search ends with its progress full and says so.
    await expect.poll(() => fix.locator('.ptq-fix-progress-text').textContent()).toMatch(/^Fix: done in \d+ s$/);
    expect(await fix.locator('.ptq-fix-progress').getAttribute('value')).toBe('1');
    // The final set first: one row per node raised, as many as the summary says and the export holds.
    const finalRows = fix.locator('.ptq-fix-final tbody tr');
    const raised = await finalRows.count();
    expect(raised).toBeGreaterThan(0);
    expect(await fix.locator('.ptq-fix-summary').textContent()).toMatch(new RegExp(`on ${tuneCount} of ${sampleCount} samples.*: .* with ${raised} nodes? raised`));
    // The samples it did not tune on: named, with the target metric there and whether it holds.
    const heldCount = sampleCount - tuneCount;
    const held = fix.locator('.ptq-fix-held-out');
    expect(['true', 'false']).toContain(await held.getAttribute('data-met'));
    expect(await held.textContent()).toMatch(new RegExp(`^On ${heldCount} held-out samples? \\(.*\\): .* (meets|misses) cosine-similarity`));
    // The search steps and the path chart behind their disclosure.
    if (await fix.locator('.ptq-fix-details').getAttribute('open') === null) await fix.locator('.ptq-fix-details > summary').click();
    expect(await fix.locator('.ptq-fix-steps li').count()).toBeGreaterThan(0);
    // The path chart: one dot per point of the core's path (the start, then each step of the table the
    // panel shows from the same result), labels as the CLI's fix_path.svg, at least 14 px apart
    // however long the search (one in k labelled, the first and the last always).
    const rows = fix.locator('.ptq-fix-steps-table tbody tr');
    const steps = [];
    for (let i = 0; i < await rows.count(); i++) steps.push(await rows.nth(i).getAttribute('data-node'));
    expect(steps.length).toBeGreaterThan(0);
    const svg = fix.locator('.ptq-fix-chart svg');
    await svg.waitFor();
    const dots = (await svg.locator('path.steps').getAttribute('d')).match(/M/g) ?? [];
    expect(dots).toHaveLength(steps.length + 1);
    expect(await fix.locator('.ptq-fix-chart').getAttribute('data-points')).toBe(String(steps.length + 1));
    const labels = ['start'];
    for (let i = 0; i < steps.length; i++) {
      const step = { phase: await rows.nth(i).getAttribute('data-phase'), node: steps[i], action: await rows.nth(i).locator('td').nth(2).textContent() };
      labels.push(ellipsize(stepLabel(step), 32));
    }
    // (one locator call per element: Netron replaces window.eval, which allTextContents needs)
    const tickEls = svg.locator('.axis-x .tick');
    const ticks = [];
    for (let i = 0; i < await tickEls.count(); i++) {
      const box = await tickEls.nth(i).locator('text').boundingBox();
      ticks.push({ text: await tickEls.nth(i).locator('text').textContent(), x: box.x + box.width / 2 });
    }
    expect(ticks[0].text).toBe('start');
    expect(ticks.at(-1).text).toBe(labels.at(-1));
    let from = 0;
    for (const t of ticks) {
      const at = labels.indexOf(t.text, from);
      expect(at, `tick '${t.text}' is a step label, in order`).toBeGreaterThanOrEqual(from);
      from = at + 1;
    }
    for (let i = 1; i < ticks.length; i++) expect(ticks[i].x - ticks[i - 1].x, 'labels 14 px apart or more').toBeGreaterThanOrEqual(13.5);
    // The fix's own export names the file opened (the requests' model_file), not "model.onnx"; a fix
    // with new thresholds (tried first where the format it is for carries them) cannot go to Horizon's
    // YAML, and the panel says so beside the button.
    const actions = [];
    for (let i = 0; i < raised; i++) actions.push(await finalRows.nth(i).getAttribute('data-action'));
    await fix.locator('.ptq-config-format').selectOption('horizon-yaml');
    if (actions.includes('threshold')) {
      await fix.locator('.ptq-config-export').click();
      const note = fix.locator('.ptq-config-export-note[data-error="true"]');
      await note.waitFor();
      expect(await note.textContent()).toMatch(/horizon-yaml: calibration node '.*' has thresholds set by the configuration, which horizon-yaml cannot carry/);
      await expectInWindow(page, note, 'the refusal beside the button');
    } else {
      const fixYaml = (await download(page, () => fix.locator('.ptq-config-export').click())).bytes.toString('utf8');
      expect(fixYaml.split('\n')[0]).toContain(`for ${path.basename(entry.model)}. Metric reached: `);
    }
    // The fix's configuration by onnxruntime, beside ptqscope's numbers (checked below, on the
    // configuration the what-if view holds once the fix is applied: the same states).
    const fixCheck = onnxruntime === 'check' ? await runCheck(page, fix) : null;
    // Applied: the what-if view shows, each node of the fix one change that can be undone.
    await fix.locator('.ptq-fix-apply').click();
    await whatif.waitFor();
    await runs(4);
    expect(await whatif.locator('.ptq-whatif-changes li').count()).toBe(raised);
    expect(await whatif.locator('.ptq-whatif-status').textContent()).toBe(`Changes in effect: ${raised}`);
    const fixed = await numbers(whatif);

    // 6. Export for the toolchain: the core's bytes for the configuration the page holds.
    const fixConfig = JSON.parse((await download(page, () => whatif.locator('.ptq-whatif-save').click())).bytes.toString('utf8'));
    expect(fixConfig.provenance).toMatchObject({ analysis: 'fix' });
    // The what-if shows the fix's configuration on every sample; on the tuning ones it meets the target.
    const fixedRef = analyze({ analysis: 'what_if', options: ALL_SAMPLES, config: fixConfig });
    for (const [m, v] of Object.entries(fixedRef.what_if.mean)) expect(fixed[m].after, m).toBe(String(v));
    const fixedTuning = analyze({ analysis: 'what_if', options: { ...ALL_SAMPLES, held_out: true }, config: fixConfig });
    expect(Number(fixedTuning.what_if.mean['cosine-similarity'])).toBeGreaterThanOrEqual(target);
    await whatif.locator('.ptq-config-format').selectOption(exportAs);
    const exported = await download(page, () => whatif.locator('.ptq-config-export').click());
    expect(exported.name.endsWith(exportFormat(exportAs).suffix), exported.name).toBe(true);
    const expectedBytes = Buffer.from(session.exportConfig(JSON.stringify(fixConfig), exportAs));
    expect(exported.bytes.equals(expectedBytes), `${exportAs}: the page's bytes are the core's`).toBe(true);

    // "Check with onnxruntime": the fix's configuration in the fix panel and in the what-if view.
    if (onnxruntime === 'check') {
      const expected = await expectedCheck({ ptq, session, sampleNames: data.sampleNames, config: fixConfig, options: ALL_SAMPLES });
      expectCheckShows(fixCheck, expected);
      expectCheckShows(await runCheck(page, whatif), expected);
    } else if (onnxruntime === 'unavailable') {
      expect(await whatif.locator('.ptq-ort-check').isDisabled()).toBe(true);
      expect(await whatif.locator('.ptq-ort-status').textContent()).toMatch(/does not carry onnxruntime-web/);
    }

    // 7. Errors after the fix as B: the table of changed nodes, the unmatched lists, both curves.
    await whatif.locator('.ptq-node-errors-run').click();
    await scope.locator('.ptq-whatif[data-node-errors="2"]').waitFor({ timeout: 120_000 });
    await show('compare');
    await compare.locator('.ptq-compare-current-b').click();
    await compare.locator('.ptq-compare-source').selectOption('node_errors:accumulated');
    await compare.locator('.ptq-compare-rows tbody tr').first().waitFor();
    expect(await compare.locator('.ptq-compare-chart svg path.curve').count()).toBe(2);
    const after = analyze({ analysis: 'node_errors', options: ALL_SAMPLES, config: fixConfig });
    const top = await compare.locator('.ptq-compare-rows tbody tr').first().getAttribute('data-item');
    const deltas = Object.keys(errors.node_errors.nodes).map((n) => [n, Math.abs(Number(after.node_errors.nodes[n].accumulated) - Number(errors.node_errors.nodes[n].accumulated))]);
    const largest = Math.max(...deltas.map(([, d]) => d).filter(Number.isFinite));
    expect(deltas.find(([n]) => n === top)[1]).toBe(largest);
    return { items, config, fixConfig, target };
  } finally {
    session.delete();
  }
}

// The results the CLI's `runall` writes (results.json) for the fixture, with its defaults but the
// sweeps' samples: every one, as the page and the plugin start with (-dn 0).
export async function cliRunall(entry) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-e2e-runall-'));
  try {
    const r = await cli(['runall', entry.model, entry.data, '-s', out, '-dn', '0', '--workers', '1', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/**
 * runAll(page, {scope, show, entry, runDone}): Run all in the analyses panel with its defaults; every
 * chart type drawn, and the results the Export panel saves hold every entry of the CLI's `runall`
 * results.json on the same files, equal (the document may also hold earlier runs). Locators only,
 * as runLoop.
 */
export async function runAll(page, { scope, show, entry, runDone }) {
  await show('analyses');
  await scope.locator('.ptq-analysis-tabs button[data-analysis="runall"]').click();
  await scope.locator('.ptq-run').click();
  await runDone();
  expect(await scope.locator('.ptq-analysis-output').textContent()).toMatch(/sensitivity, distribution, channelwise, acc_error, sensitivity_analysis/);
  const marks = async (tab, selector) => {
    await scope.locator(`.ptq-analysis-tabs button[data-analysis="${tab}"]`).click();
    return scope.locator(`.ptq-analysis-output ${selector}`).count();
  };
  expect(await marks('sensitivity', 'table.sensitivity-table')).toBeGreaterThan(0);
  expect(await marks('distribution', 'svg path.bars')).toBeGreaterThan(0);
  expect(await marks('channelwise', 'svg path.boxes')).toBeGreaterThan(0);
  expect(await marks('acc_error', 'svg path.curve')).toBeGreaterThan(0);
  expect(await marks('sensitivity_analysis', 'svg path.cumulative, svg path.cumulative-isolated')).toBeGreaterThan(0);
  await show('export');
  const saved = await download(page, () => scope.locator('.ptq-export button[data-export="json"]').click());
  const ours = JSON.parse(saved.bytes.toString('utf8'));
  const theirs = await cliRunall(entry);
  for (const section of RUNALL_SECTIONS) {
    expect(theirs[section], section).toBeDefined();
    expect(ours[section], section).toMatchObject(theirs[section]);
  }
}
