// Results stay byte-identical through refactoring: every analysis of the core, run through the wasm
// session on the calibrated fixtures, must give exactly the result document whose SHA-256 is recorded
// in tests/fixtures/result-digests.json. The digests of the fixture files are recorded too, so a changed
// fixture generator is reported as such rather than as a changed result.
//
// When a change is meant to alter results (a new field, a corrected number), check the difference and
// record the new digests with PTQ_UPDATE_GOLDEN=1; say why in the commit message.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { describe, it, expect, afterAll } from 'vitest';
import { fixture, openSession, REPO_ROOT } from './helpers.mjs';

const DIGESTS = path.join(REPO_ROOT, 'tests/fixtures/result-digests.json');
const UPDATE = process.env.PTQ_UPDATE_GOLDEN === '1';

const sha256 = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');

// The fixture's bytes: the model and every calibration file (relative path and content).
function fixtureDigest(entry) {
  const hash = crypto.createHash('sha256').update(fs.readFileSync(entry.model));
  const walk = (dir, rel) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (fs.statSync(full).isDirectory()) walk(full, `${rel}${name}/`);
      else hash.update(`${rel}${name}\0`).update(fs.readFileSync(full));
    }
  };
  walk(entry.data, '');
  return hash.digest('hex');
}

// The document's bytes except the wall-clock timings (`timings_ms`, the one field that varies run to run)
// and the engine that computed it (`engine`: the wasm engine here; the native one gives the same
// document within float error, tests/js/native_engine.test.mjs).
function withoutTimings(text) {
  const out = text.replace(/,"engine":\{[^{}]*\}/, '').replace(/,"timings_ms":\{[^{}]*\}/, '');
  if (out.length > text.length - 40) throw new Error('the result has no engine or timings_ms object: update withoutTimings');
  return out;
}

// Requests of every analysis; `nodes` are the fixture's first calibration nodes (for the analyses that
// need a list). The large detector runs the cheaper half only, to keep the test run short.
const calibrationNodes = (summary, kind) => summary.calibrations.filter((c) => !kind || c.kind === kind).slice(0, 3).map((c) => c.name);
const ALL = (summary) => ({
  'sensitivity.node': { analysis: 'sensitivity', options: { node_type: 'node', metrics: ['cosine-similarity', 'mse', 'mre', 'sqnr', 'chebyshev'] } },
  'sensitivity.weight': { analysis: 'sensitivity', options: { node_type: 'weight', data_num: 2 } },
  'sensitivity.activation': { analysis: 'sensitivity', options: { node_type: 'activation', metrics: ['sqnr'] } },
  leave_one_out: { analysis: 'leave_one_out', options: { node_type: 'activation' } },
  acc_error: { analysis: 'acc_error', options: { quantize_node: ['weight', 'activation'] } },
  'acc_error.average': { analysis: 'acc_error', options: { quantize_node: ['activation'], metric: 'mse', average_mode: true } },
  distribution: { analysis: 'distribution', options: { nodes_list: calibrationNodes(summary), bins: 64 } },
  channelwise: { analysis: 'channelwise', options: { nodes_list: calibrationNodes(summary, 'weight') } },
  stat_info: { analysis: 'stat_info' },
  sensitivity_analysis: { analysis: 'sensitivity_analysis', options: { qtype: 'int16' } },
  what_if: { analysis: 'what_if', config: { schema: 'ptqscope.config', version: 1, base: 'stored', intents: [{ node: calibrationNodes(summary, 'feature')[0], action: 'int16' }] } },
  node_errors: { analysis: 'node_errors' },
  fix: { analysis: 'fix', options: { target: 'cosine-similarity>=0.9999' } },
  explain: { analysis: 'explain' },
  calibration_methods: { analysis: 'calibration_methods', options: { percentiles: [99.99] } },
});
const CHEAP = ['acc_error', 'what_if', 'node_errors'];

const CASES = [
  ['digits_cnn_calibrated', null],
  ['digits_cnn_int16_calibrated', null],
  ['ppocr_cls_calibrated', null],
  ['blazeface_128_calibrated', null],
  ['yolov8n_like_calibrated', CHEAP],
];

const recorded = fs.existsSync(DIGESTS) ? JSON.parse(fs.readFileSync(DIGESTS, 'utf8')) : null;
const seen = { fixtures: {}, results: {} };

describe('result documents are byte-identical to the recorded ones', () => {
  afterAll(() => {
    if (UPDATE) fs.writeFileSync(DIGESTS, `${JSON.stringify(seen, null, 2)}\n`);
  });

  it.each(CASES)('%s', async (name, only) => {
    if (!recorded && !UPDATE) throw new Error(`${DIGESTS} is missing: record it with PTQ_UPDATE_GOLDEN=1`);
    const entry = fixture(name);
    seen.fixtures[name] = fixtureDigest(entry);
    if (!UPDATE) {
      expect(seen.fixtures[name], `the fixture ${name} itself changed (model or calibration files): check the generator `
        + 'change, then record new digests with PTQ_UPDATE_GOLDEN=1').toBe(recorded.fixtures[name]);
    }
    const { session, summary } = await openSession(entry);
    try {
      const requests = Object.entries(ALL(summary)).filter(([key]) => !only || only.includes(key));
      for (const [key, request] of requests) {
        const id = `${name} ${key}`;
        seen.results[id] = sha256(withoutTimings(session.analyze(JSON.stringify(request))));
        if (!UPDATE) expect(seen.results[id], `${id}: the result document changed`).toBe(recorded.results[id]);
      }
    } finally {
      session.delete();
    }
  }, 300_000);
});
