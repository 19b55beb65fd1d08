// The cause hints and the calibration-method comparison through web/pipeline (what the page and the
// plugin will run): on worker threads of the wasm core, one call each with progress events (the core's
// steps), the same document as a direct session call; the result helpers (result.mjs) hand a "Why"
// view its histogram bins with their edges, the hints as a heat layer, the comparison's rows; and the
// catalog carries the cause vocabulary, the rules' cut-offs, the threshold methods and the split.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../web/pipeline/pool.mjs';
import { spawnNodeWorker } from '../../web/pipeline/node_worker.mjs';
import { runAnalysis } from '../../web/pipeline/sweep.mjs';
import { CAUSES, HINT_RULES, SAMPLE_SPLIT, THRESHOLD_METHODS, analysisSpec, cause } from '../../web/pipeline/catalog.mjs';
import { calibrationMethodRows, explainRows, hintEvidence, hintLayer, toNumber } from '../../web/pipeline/result.mjs';
import { fixture, openSession, readCalibrationFolder } from './helpers.mjs';
import { WASM_PATH } from './cli_fixture.mjs';

const entry = fixture('planted_clipping');
const withoutTimings = (doc) => JSON.stringify({ ...doc, timings_ms: undefined });

describe('explain and calibration_methods on the pipeline', () => {
  let pool;
  let direct;
  beforeAll(async () => {
    pool = createPool({ size: 2, spawn: () => spawnNodeWorker(WASM_PATH) });
    await pool.load({ model: new Uint8Array(fs.readFileSync(entry.model)), files: readCalibrationFolder(entry.data), modelName: entry.model, dataName: entry.data });
    direct = await openSession(entry);
  });
  afterAll(() => {
    pool?.close();
    direct?.session.delete();
  });

  it('runs whole with progress events and gives the session\'s document', async () => {
    for (const analysis of ['explain', 'calibration_methods']) {
      expect(analysisSpec(analysis).splittable).toBe(false);
      const progress = [];
      const doc = await runAnalysis(pool, { analysis }, { onProgress: (done, total) => progress.push([done, total]) });
      const same = JSON.parse(direct.session.analyze(JSON.stringify({ analysis })));
      expect(withoutTimings(doc)).toBe(withoutTimings(same));
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.at(-1)[0]).toBeLessThanOrEqual(progress.at(-1)[1]);
      expect(doc.cancelled).toBe(false);
    }
  });

  it('hands the faces what a "Why" view, a heat layer and a table draw', async () => {
    const doc = await runAnalysis(pool, { analysis: 'explain' });
    const rows = explainRows(doc);
    const first = rows[0];
    expect(first.cause).toBe('clipping');
    expect(first.effect.after).toBe(toNumber(doc.hints[0].effect.after));
    const why = hintEvidence(doc, first.calibration_node);
    const e = doc.hints_evidence[first.calibration_node];
    // 128 bins covering [lo, hi] edge to edge, every value counted once.
    expect(why.bins.length).toBe(e.histogram.counts.length);
    expect(why.bins[0].x0).toBe(toNumber(e.histogram.lo));
    expect(why.bins.at(-1).x1).toBeCloseTo(toNumber(e.histogram.hi), 12);
    expect(why.bins.reduce((s, b) => s + b.count, 0)).toBe(e.values);
    expect(why.range).toEqual(e.range.map(toNumber));
    expect(why.hints.map((h) => h.cause)).toContain('clipping');
    expect(hintEvidence(doc, 'no such node')).toBe(null);
    const layer = hintLayer(doc);
    for (const h of rows) if (h.node) expect(layer.get(h.node)).toBeGreaterThanOrEqual(h.effect.recovered);

    const methods = await runAnalysis(pool, { analysis: 'calibration_methods', options: { toolchain: 'rknn' } });
    const table = calibrationMethodRows(methods);
    expect(table[0].stored).toBe(true);
    expect(table.filter((r) => r.best).map((r) => r.label)).toEqual([methods.calibration_methods.best]);
    expect(table.find((r) => r.best).best_for).toContain('rknn');
    expect(typeof table[1].tune['cosine-similarity']).toBe('number');
    expect(methods.config.calibration ?? null).toEqual(table.find((r) => r.best).stored ? null : expect.any(Object));
  });

  it('the catalog carries the causes, the cut-offs, the threshold methods and the split', () => {
    expect(CAUSES.map((c) => c.name)).toEqual(['clipping', 'coarse-resolution', 'channel-spread', 'range-mismatch', 'one-sided', 'inherited']);
    for (const c of CAUSES) for (const k of ['doc', 'rule', 'cure']) expect(c[k].length).toBeGreaterThan(10);
    expect(cause('clipping').name).toBe('clipping');
    expect(() => cause('noise')).toThrow("unknown cause 'noise'");
    expect(Object.keys(HINT_RULES).sort()).toEqual(['branch_ratio', 'channel_spread', 'clipped', 'inherited', 'negative', 'occupied']);
    expect(THRESHOLD_METHODS.map((m) => m.name)).toEqual(['max', 'percentile', 'mse', 'kl']);
    expect(SAMPLE_SPLIT.rule).toBe('alternate');
  });
});
