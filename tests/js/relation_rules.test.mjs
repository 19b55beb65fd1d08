// The two relation rules of §1.9 (describe().relation_rules: horizon_nn, the default, does not look through
// Clip; hmct does) on the ReLU6 fixture (scripts/fixtures/relu6_models.py), against what the fixture
// script computed on its own: each node's calibration set, the normal nodes (the node items), the
// accumulated-error x axis, the `node` column (Add_6 reads g_HzCalibration twice) and the node
// sensitivities, evaluated in float64 on tensors that are exact in float32 (so ours differ only by the
// rounding of the float32 metric and of the mean over the outputs: a few roundings of at most 2^-24
// each, bounded here by 2^-20). Through the session (the page's and the plugin's engine) and the CLI.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, fixture, openSession } from './helpers.mjs';
import { cli } from './cli_fixture.mjs';
import { RELATION_RULES } from '../../web/pipeline/catalog.mjs';
import { buildReport } from '../../web/report/report.mjs';
import { createDocument } from '../../web/charts/node_dom.mjs';

const entry = fixture('relu6_calibrated');
const expected = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry.expected), 'utf8'));
const RULES = RELATION_RULES.map((r) => r.name);
const FLOAT32_METRIC = 2 ** -20;

const toNumber = (v) => (typeof v === 'number' ? v : Number(v));

describe('relation rules on the ReLU6 fixture', () => {
  let s;
  beforeAll(async () => {
    s = await openSession(entry);
  });
  afterAll(() => s.session.delete());

  it('the core describes both rules, the default first', () => {
    expect(RULES).toEqual(['horizon_nn', 'hmct']);
    expect(RELATION_RULES[1].skippable).toContain('Clip');
    expect(RELATION_RULES[0].skippable).not.toContain('Clip');
    expect(() => s.session.setRelations('hmct2')).toThrow(/unknown relation rules 'hmct2' \(expected 'horizon_nn', 'hmct'\)/);
  });

  describe.each(RULES)('%s', (rule) => {
    const want = expected.rules[rule];
    beforeAll(() => s.session.setRelations(rule));

    it('graphJson: every node\'s calibration set, and the rules when not the default', () => {
      const graph = JSON.parse(s.session.graphJson());
      const sets = Object.fromEntries(graph.nodes.filter((n) => n.input_calibrations.length).map((n) => [n.name, n.input_calibrations]));
      expect(sets).toEqual(want.sets);
      expect(graph.relations).toBe(rule === RULES[0] ? undefined : rule);
      // The viewer's consumers list each node once; the node column below repeats it per input slot.
      expect(graph.nodes.find((n) => n.name === 'g_HzCalibration').calibration.consumers).toEqual(['Add_6']);
    });

    it('node items, node sensitivities and the result\'s relations', () => {
      const request = { analysis: 'sensitivity', options: { node_type: 'node', metrics: ['cosine-similarity', 'mse'] } };
      expect(JSON.parse(s.session.listItems(JSON.stringify(request)))).toEqual(want.normal_nodes);
      const doc = JSON.parse(s.session.analyze(JSON.stringify(request)));
      expect(doc.relations).toBe(rule === RULES[0] ? undefined : rule);
      expect(doc.samples).toEqual([expected.sample]);
      const rows = doc.sensitivity.node;
      expect(Object.keys(rows).sort()).toEqual([...want.normal_nodes].sort());
      for (const [node, values] of Object.entries(want.sensitivity)) {
        expect(Math.abs(toNumber(rows[node]['cosine-similarity']) - values['cosine-similarity']), `${node} cosine`).toBeLessThanOrEqual(FLOAT32_METRIC);
        expect(Math.abs(toNumber(rows[node].mse) - values.mse), `${node} mse`).toBeLessThanOrEqual(FLOAT32_METRIC * values.mse);
      }
      // A node item switches exactly its calibration set: the same runs as that set given as a group.
      const group = JSON.parse(s.session.analyze(JSON.stringify({ ...request, options: { ...request.options, interested_nodes: [want.sets.Conv_2] } })));
      expect(group.sensitivity.node[want.sets.Conv_2.join('+')]).toEqual(rows.Conv_2);
    });

    it('the accumulated-error x axis is the normal nodes\' outputs', () => {
      const doc = JSON.parse(s.session.analyze(JSON.stringify({ analysis: 'acc_error', options: { quantize_node: ['weight', 'activation'] } })));
      for (const curve of Object.values(doc.acc_error)) expect(curve.x).toEqual(want.x_axis);
    });

    it('the node column repeats a consumer once per input slot', () => {
      const doc = JSON.parse(s.session.analyze(JSON.stringify({ analysis: 'sensitivity', options: { node_type: 'activation' } })));
      for (const [cal, row] of Object.entries(doc.sensitivity.activation)) expect(row.node, cal).toBe(want.node_column[cal]);
      expect(doc.sensitivity.activation.g_HzCalibration.node).toBe('Add_6;Add_6');
    });
  });

  it('mergeResults refuses parts computed under different rules', () => {
    const part = (rule) => {
      s.session.setRelations(rule);
      return s.session.analyze(JSON.stringify({ analysis: 'sensitivity', options: { node_type: 'activation' }, items: { begin: 0, end: 2 } }));
    };
    expect(() => s.ptq.mergeResults(`[${part('horizon_nn')},${part('hmct')}]`)).toThrow(/relations differs from results\[0\]/);
  });
});

describe('--relations on the command line', () => {
  let dir;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-relations-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each(RULES)('get-sensitivity-of-nodes --relations %s', async (rule) => {
    const json = path.join(dir, `${rule}.json`);
    const r = await cli(['get-sensitivity-of-nodes', entry.model, entry.data, '--relations', rule, '--json', json, '--quiet', '--workers', '2']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(json, 'utf8'));
    expect(doc.sensitivity_order.node.slice().sort()).toEqual([...expected.rules[rule].normal_nodes].sort());
    expect(doc.relations).toBe(rule === RULES[0] ? undefined : rule);
    // The HTML report says which rules made the node sets.
    const row = buildReport(doc, { document: createDocument() }).match(/<tr><td>node relations<\/td><td>([^<]*)<\/td><\/tr>/);
    expect(row?.[1]).toMatch(new RegExp(`^${rule}${rule === RULES[0] ? ' \\(default\\)' : ''}: .*Clip`));
  });

  // A configuration's intent on a node switches the node's calibration set by the rules given: under
  // hmct, Conv_2's set holds c0_HzCalibration (ReLU6 -> Clip), which the fixture script computed.
  const writeConfig = (name, intents) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify({ schema: 'ptqscope.config', version: 1, intents }));
    return file;
  };
  const outputsOf = (out) => fs.readdirSync(out).sort().map((d) => fs.readdirSync(path.join(out, d)).sort()
    .map((f) => fs.readFileSync(path.join(out, d, f)).toString('base64')).join()).join();

  it.each(RULES)('run --config --relations %s: an intent on a node switches that rule\'s calibration set', async (rule) => {
    const byNode = writeConfig('node.json', [{ node: 'Conv_2', action: 'float' }]);
    const bySet = Object.fromEntries(RULES.map((r) => [r, writeConfig(`set-${r}.json`, expected.rules[r].sets.Conv_2.map((node) => ({ node, action: 'float' })))]));
    const run = async (config, relations, out) => {
      const r = await cli(['run', entry.model, entry.data, '--config', config, '--out', path.join(dir, out), '--quiet', ...relations]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      return outputsOf(path.join(dir, out));
    };
    const node = await run(byNode, ['--relations', rule], `node-${rule}`);
    expect(node).toBe(await run(bySet[rule], [], `set-${rule}`));
    // The two rules' sets differ here, so the outputs do too.
    const other = RULES.find((r) => r !== rule);
    expect(node).not.toBe(await run(bySet[other], [], `set-${other}-for-${rule}`));
  });

  it.each(RULES)('export-config --relations %s: the tensors of an intent\'s calibration set', async (rule) => {
    const config = writeConfig('int16.json', [{ node: 'Conv_2', action: 'int16' }]);
    const r = await cli(['export-config', config, '--model', entry.model, '--format', 'ort-json', '--relations', rule]);
    expect(r.code).toBe(0);
    // The fixture names a calibration node after the tensor it quantizes: <tensor>_HzCalibration.
    const tensors = expected.rules[rule].sets.Conv_2.map((c) => c.replace(/_HzCalibration$/, ''));
    const listed = r.stdout.match(/"Conv_2": \{"action": "int16", "tensors": (\[[^\]]*\])\}/);
    expect(JSON.parse(listed?.[1] ?? 'null')?.sort()).toEqual(tensors.sort());
  });

  it('an unknown name is an error naming the option and the rules', async () => {
    const r = await cli(['get-sensitivity-of-nodes', entry.model, entry.data, '--relations', 'newest', '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--relations.*'newest' is not one of 'horizon_nn', 'hmct'/);
  });
});
