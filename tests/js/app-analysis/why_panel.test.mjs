// The Why and calibration-methods panels (the page's dock and the Netron plugin mount the same code)
// on the documents the core writes for the planted clipping fault: the ranked hints as rows, a row
// selecting its quantizer and focusing the node it feeds with its histogram drawn, "Apply" handing
// the suggestion to the what-if view, the hints as a heat layer (only hinted nodes coloured), and
// the method comparison with its best setting marked and exported by the core. linkedom page; the
// runner answers with the core's documents computed here.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { parseHTML } from 'linkedom';
import { createStore, DEFAULTS } from '../../../web/app/state.mjs';
import { selectValue } from '../../../web/app/analysis/forms.mjs';
import { mountWhyPanel, evidenceText } from '../../../web/app/explain/why_panel.mjs';
import { mountMethodsPanel } from '../../../web/app/explain/methods_panel.mjs';
import { buildHeat } from '../../../web/app/heatmap/mapping.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';
import { HINT_LAYER } from '../../../web/pipeline/catalog.mjs';
import { openSession, fixture } from '../helpers.mjs';

let session;
let graph;
let hints;
let methods;

beforeAll(async () => {
  ({ session } = await openSession(fixture('planted_clipping')));
  graph = JSON.parse(session.graphJson());
  const analyze = (r) => JSON.parse(session.analyze(JSON.stringify(r)));
  hints = analyze({ analysis: 'explain', options: { data_num: 0 } });
  methods = analyze({ analysis: 'calibration_methods', options: { data_num: 0, per_channel: false } });
}, 120_000);

afterAll(() => session?.delete());

function host(answer) {
  const { window } = parseHTML('<!DOCTYPE html><html><body><div id="a"></div></body></html>');
  const state = createStore({ ...DEFAULTS, picked: new Set(), graph, modelName: 'planted_clipping.onnx' });
  const listeners = new Set();
  const emit = (ev) => listeners.forEach((fn) => fn(ev));
  const runner = {
    requests: [],
    async run(kind, payload, label) {
      this.requests.push(payload);
      emit({ type: 'start', label });
      state.set('results', answer);
      emit({ type: 'done', label, cancelled: false, elapsedMs: 1000 });
      return answer;
    },
    async call(method, { config, format }) {
      return { data: session.exportConfig(JSON.stringify(config), format) };
    },
    cancel() {},
    on: (fn) => (listeners.add(fn), () => listeners.delete(fn)),
  };
  return { window, doc: window.document, state, runner };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('the Why panel', () => {
  it('ranks the hints as the core does, selects and focuses a hint\'s nodes with its histogram, applies its suggestion', async () => {
    const { window, doc, state, runner } = host(hints);
    const focused = [];
    const applied = [];
    const shown = [];
    const whatIf = { applyIntent: async (intent, source) => applied.push([intent, source]) };
    const panel = mountWhyPanel(doc.getElementById('a'), state, runner, whatIf, { focus: (n) => focused.push(n), show: (id) => shown.push(id) });
    doc.querySelector('.ptq-why-run').dispatchEvent(new window.Event('click'));
    await settle();
    // Every sample (the page's default, an empty field), the core's default metric.
    expect(runner.requests[0]).toEqual({ analysis: 'explain', options: { metric: 'cosine-similarity', data_num: 0 } });
    expect(panel.element.getAttribute('data-state')).toBe('done');
    const rows = [...doc.querySelectorAll('.ptq-why-table tbody tr')];
    expect(rows.map((r) => [r.dataset.cause, r.dataset.calibration])).toEqual(hints.hints.map((h) => [h.cause, h.calibration_node]));
    // The planted quantizer first, with its cause, evidence and measured effect as the core wrote them.
    const first = hints.hints[0];
    expect(first.cause).toBe('clipping');
    expect(rows[0].querySelector('.ptq-why-evidence').textContent).toBe(evidenceText(first.evidence));
    expect(rows[0].querySelector('.ptq-why-evidence').textContent).toMatch(/^clipped \d/);
    expect(rows[0].querySelector('.ptq-why-suggestion').textContent).toBe(first.suggestion.text);
    expect(rows[0].querySelector('.ptq-why-effect').getAttribute('data-after')).toBe(String(first.effect.after));
    // The graph is coloured by the hints.
    expect(state.get('heatSettings').view).toBe('hints');
    // Selecting: the quantizer in the sidebar, the node it feeds centred, its histogram with the threshold.
    rows[0].dispatchEvent(new window.Event('click'));
    expect(state.get('selection')).toBe(first.calibration_node);
    expect(focused).toEqual([first.node]);
    expect(rows[0].getAttribute('aria-selected')).toBe('true');
    const line = doc.querySelector('.ptq-why-detail svg line.threshold');
    expect(Number(line.getAttribute('data-value'))).toBeCloseTo(Number(first.evidence.thresholds[0]), 6);
    expect(doc.querySelector('.ptq-why-detail svg path.bars-clipped').getAttribute('d')).not.toBe('');
    // Apply: the suggestion as the core wrote it, marked as a hint's, then the what-if view.
    rows[0].querySelector('.ptq-why-apply').dispatchEvent(new window.Event('click'));
    await settle();
    expect(applied).toEqual([[first.suggestion, 'hint']]);
    expect(shown).toEqual(['whatif']);
    panel.dispose();
    expect(doc.querySelector('.ptq-why')).toBeNull();
  });

  it('the hints are a heat layer: the nodes a hint names are coloured, hottest where a cure recovers most; the others not at all', () => {
    const heat = buildHeat(hints, graph, { view: 'hints' }, heatScale);
    const named = new Map();
    for (const h of hints.hints) named.set(h.node, Math.max(named.get(h.node) ?? -Infinity, Number(h.effect.recovered)));
    expect([...heat.values.keys()].sort()).toEqual([...named.keys()].sort());
    for (const [node, v] of named) expect(heat.values.get(node).value).toBe(v);
    expect(heat.legend.metric).toBe(HINT_LAYER.name);
    // better 'lower': the larger share is the worse (hot) end.
    expect(heat.legend.direction).toMatch(/higher is worse/);
  });
});

describe('the calibration-methods panel', () => {
  it('a row per setting with tuning and held-out numbers, the best marked, the best setting exported by the core', async () => {
    const { window, doc, state, runner } = host(methods);
    const saved = [];
    const panel = mountMethodsPanel(doc.getElementById('a'), state, runner, { open: async () => {} }, { save: (name, data) => saved.push({ name, data }) });
    doc.querySelector('.ptq-methods-run').dispatchEvent(new window.Event('click'));
    await settle();
    const section = methods.calibration_methods;
    const rows = [...doc.querySelectorAll('.ptq-methods-table tbody tr')];
    expect(rows.map((r) => r.dataset.setting)).toEqual(section.settings.map((s) => s.label));
    const best = rows.filter((r) => r.dataset.best === 'true');
    expect(best.map((r) => r.dataset.setting)).toEqual([section.best]);
    expect(best[0].querySelector('th').textContent).toContain('★ best');
    const s = section.settings.find((x) => x.label === section.best);
    const cell = best[0].querySelector(`td[data-metric="${section.metric}"]:not([data-held-out])`);
    expect(cell.getAttribute('data-value')).toBe(String(s.tune[section.metric]));
    expect(best[0].querySelectorAll('td[data-held-out="true"]').length).toBeGreaterThan(0);
    // The best setting exported: the core's bytes of the result's configuration.
    selectValue(doc.querySelector('.ptq-methods .ptq-config-format'), 'horizon-quant-config');
    doc.querySelector('.ptq-methods .ptq-config-export').dispatchEvent(new window.Event('click'));
    await settle();
    await settle();
    expect(state.get('error')).toBeNull();
    expect(saved).toHaveLength(1);
    expect(saved[0].data).toBe(session.exportConfig(JSON.stringify(methods.config), 'horizon-quant-config'));
    expect(String(saved[0].data)).toMatch(/calibration_type/);
    panel.dispose();
  });
});
