// The what-if from the command line (any analysis under `--config`, docs/fix-workflow.md) on a torch
// Q/DQ model (§1.11), against onnxruntime: a configuration that switches one activation quantizer OFF
// is the model with every quantizer but that one, which the fixture generator writes on its own
// (`without__<k>`). `ptqscope node-errors --config` gives, at the node that writes the model output,
// the accumulated cosine of the configured model against the float one over every sample;
// onnxruntime-node runs the generator's model and the float model (graph optimisation off: the
// expectation; at 'basic': its own spread), the cosine computed here (§4: per sample, then the mean).
// The QOperator fixtures' outputs are written by an output quantizer or a bias Add, nodes that
// node-errors does not list: there, and on the Q/DQ model too, `ptqscope run --config` writes the
// configured model's outputs, compared element by element with onnxruntime on the generator's model
// without that quantizer (graph optimisation off: the expectation; 'basic': its own spread).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, decodeNpy, fixture, openSession } from './helpers.mjs';
import { cli } from './cli_fixture.mjs';
import { expectItemJudged, float64Variants, judgeItem, offAgainstSpread, oracleItem, ortRun, ourFloatRuns, ourItemRuns } from './quant_oracle.mjs';
import { feedsOf } from './tie_origin.mjs';

const open = (level) => (file) => ort.InferenceSession.create(path.resolve(FIXTURES, file), { intraOpNumThreads: 1, graphOptimizationLevel: level, logSeverityLevel: 3 });

let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-cli-whatif-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe.each(['qdq_resnet_tiny'])('%s', (name) => {
  it('node-errors --config with one activation quantizer OFF equals onnxruntime on the model without it', async () => {
    const entry = fixture(name);
    const o = entry.oracle.find((q) => q.kind === 'activation' && q.quantizer !== 'input');
    const config = path.join(tmp, `${name}.config.json`);
    fs.writeFileSync(config, JSON.stringify({ schema: 'ptqscope.config', version: 1, calibrations: { [o.quantizer]: { on: false } } }));
    const out = path.join(tmp, `${name}.json`);
    const r = await cli(['node-errors', entry.model, entry.data, '--config', config, '-d', '0', '--json', out, '--quiet', '--workers', '1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
    expect(doc.node_errors.samples).toHaveLength(fs.readdirSync(path.join(entry.data, entry.inputs[0].name)).length);

    // The node writing the (only) model output.
    const { session, summary } = await openSession(entry);
    try {
      const graph = JSON.parse(session.graphJson());
      expect(graph.outputs).toHaveLength(1);
      const writer = graph.nodes.find((n) => n.outputs.includes(graph.outputs[0].name));
      const ours = Number(doc.node_errors.nodes[writer.name]?.accumulated);
      expect(Number.isFinite(ours), `${writer.name} in node_errors`).toBe(true);

      // The configuration is the leave-one-out item of that quantizer: the CLI reports the float32
      // cosine of our runs of it, judged against onnxruntime and the float64 evaluation (judgeItem).
      const feeds = feedsOf(entry.data);
      const ourFloat = ourFloatRuns(session, summary.calibrations, feeds.length);
      const { change } = float64Variants(entry.oracle_float64).items.get(o.without);
      const expected = await oracleItem([open('disabled'), open('basic')], o.without, feeds, entry.float_model, change);
      expect(expected.cos).toBeLessThan(1); // the quantizers left change the output
      if (process.env.PTQ_REPORT) console.log(`${name} without ${o.quantizer}: ours ${ours}, onnxruntime ${expected.cos} (spread ${expected.spreadCos})`);
      const judged = judgeItem(ourItemRuns(session, summary.calibrations, o.quantizer, 'leave_one_out', ourFloat), expected, change);
      expectItemJudged(`${name} without ${o.quantizer}`, { mse: judged.mse32, 'cosine-similarity': ours }, judged);
    } finally {
      session.delete();
    }
  }, 300_000);
});

describe.each(['qop_mixed', 'qdq_resnet_tiny'])('%s', (name) => {
  it('run --config with one activation quantizer OFF writes the outputs onnxruntime gives without it', async () => {
    const entry = fixture(name);
    const o = entry.oracle.find((q) => q.kind === 'activation' && q.quantizer !== 'input');
    const config = path.join(tmp, `${name}.run.config.json`);
    fs.writeFileSync(config, JSON.stringify({ schema: 'ptqscope.config', version: 1, calibrations: { [o.quantizer]: { on: false } } }));
    const out = path.join(tmp, `${name}.run`);
    const r = await cli(['run', entry.model, entry.data, '--config', config, '--out', out, '--quiet']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);

    const feeds = feedsOf(entry.data);
    const [expectation, other] = await Promise.all([open('disabled')(o.without), open('basic')(o.without)]);
    const stored = await open('disabled')(entry.model);
    try {
      for (let k = 0; k < feeds.length; k++) {
        const a = await ortRun(expectation, feeds[k]);
        const b = await ortRun(other, feeds[k]);
        const ours = a.map((_, i) => ({ name: `sample ${k} output ${i}`, data: decodeNpy(fs.readFileSync(path.join(out, `sample_${k}`, `${i}.npy`))).data }));
        // onnxruntime at 'basic' fuses Q/DQ pairs into its integer kernels, so its spread is wide; the
        // configuration is also told from the model as stored: ours is nearer the model without the quantizer.
        const s = await ortRun(stored, feeds[k]);
        const asStored = offAgainstSpread(ours, s, [s]);
        offAgainstSpread(ours, a, [b]).forEach((row, i) => {
          if (process.env.PTQ_REPORT) console.log(`${name} without ${o.quantizer}, ${row.name}: ${row.off} off (spread ${row.spread}; ${asStored[i].off} off the model as stored)`);
          expect(row.off, row.name).toBeLessThanOrEqual(row.spread);
          expect(row.off, row.name).toBeLessThan(asStored[i].off);
        });
      }
    } finally {
      await Promise.all([expectation.release(), other.release(), stored.release()]);
    }
  }, 300_000);

  it('run refuses --config together with --quant, and a configuration naming no calibration node of the model', async () => {
    const entry = fixture(name);
    const both = await cli(['run', entry.model, entry.data, '--quant', 'on', '--config', 'x.json', '--out', path.join(tmp, 'both')]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give --quant or --config, not both/);
    const config = path.join(tmp, `${name}.bad.config.json`);
    fs.writeFileSync(config, JSON.stringify({ schema: 'ptqscope.config', version: 1, calibrations: { no_such_quantizer: { on: false } } }));
    const bad = await cli(['run', entry.model, entry.data, '--config', config, '--out', path.join(tmp, 'bad')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(config);
    expect(bad.stderr).toContain('no_such_quantizer');
    expect(fs.existsSync(path.join(tmp, 'bad'))).toBe(false);
  });
});
