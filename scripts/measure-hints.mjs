#!/usr/bin/env node
// The measurements behind the cut-offs of the cause hints (docs/explain.md): `explain` with every cure
// measured (min_recovery 0) on the clean calibrated fixtures (the zoo, the planted models' clean
// counterparts) and on the planted ones. Per model: the quantizers examined, and per cause how many
// fire the rule and how many are kept as hints at the default min_recovery; for the planted models
// the rank of the planted quantizer's hint; and the evidence of the clean models nearest each cut-off
// (the largest share clipped, the smallest occupied range, the largest channel spread and branch ratio).
// Prints markdown tables. Not a test.
// Usage: node scripts/measure-hints.mjs [--models name,name] [--workers N]
import fs from 'node:fs';
import path from 'node:path';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { REPO_ROOT, wasmModulePath } from '../web/cli/lib/wasm.mjs';
import { createPool } from '../web/pipeline/pool.mjs';
import { spawnNodeWorker } from '../web/pipeline/node_worker.mjs';
import { CAUSES, HINT_RULES, optionDefault } from '../web/pipeline/catalog.mjs';
import { toNumber } from '../web/pipeline/result.mjs';
import { option, runMain } from './bench-common.mjs';

const fixtures = path.join(REPO_ROOT, '.cache/fixtures');
const manifest = JSON.parse(fs.readFileSync(path.join(fixtures, 'manifest.json'), 'utf8'));
const wanted = option('models', '');
const KINDS = new Set(['calibrated', 'planted', 'planted_clean']);
const entries = manifest.models.filter((e) => KINDS.has(e.kind) && (!wanted || wanted.split(',').includes(e.name)));
const minRecovery = optionDefault('explain', 'min_recovery');

async function explain(entry) {
  const pool = createPool({ size: 1, spawn: () => spawnNodeWorker(wasmModulePath()) });
  try {
    await pool.load({ model: fs.readFileSync(path.join(fixtures, entry.model)), files: readCalibrationFolder(path.join(fixtures, entry.data)),
      modelName: entry.name, dataName: entry.data });
    const request = { analysis: 'explain', options: { min_recovery: 0 } };
    return JSON.parse((await pool.request({ type: 'analyze', request })).json);
  } finally {
    pool.close();
  }
}

const fmt = (v, digits = 3) => (Number.isFinite(v) ? Number(v.toPrecision(digits)).toString() : String(v));

async function main() {
  const causes = CAUSES.map((c) => c.name);
  const rows = [];
  const extremes = [];
  const planted = [];
  for (const entry of entries) {
    const t0 = Date.now();
    const doc = await explain(entry);
    const evidence = Object.values(doc.hints_evidence);
    const fired = Object.fromEntries(causes.map((c) => [c, evidence.filter((e) => e.causes.includes(c)).length]));
    fired.inherited = doc.hints.filter((h) => h.cause === 'inherited').length;
    const kept = Object.fromEntries(causes.map((c) => [c, doc.hints.filter((h) => h.cause === c && toNumber(h.effect.recovered) >= minRecovery).length]));
    rows.push({ name: entry.name, kind: entry.kind, examined: evidence.length, fired, kept, start: toNumber(doc.hints_start.tune), ms: Date.now() - t0 });
    if (entry.kind !== 'planted') {
      const perTensor = evidence.filter((e) => !e.per_channel);
      extremes.push({
        name: entry.name,
        clipped: Math.max(...evidence.map((e) => toNumber(e.clipped))),
        occupied: Math.min(...evidence.filter((e) => toNumber(e.p99_99) > 0).map((e) => toNumber(e.occupied))),
        spread: Math.max(0, ...perTensor.map((e) => toNumber(e.channel_spread))),
        branch: Math.max(0, ...evidence.filter((e) => e.branch_op === 'Concat').map((e) => toNumber(e.branch_ratio))),
        otherBranch: Math.max(0, ...evidence.filter((e) => e.branch_op && e.branch_op !== 'Concat').map((e) => toNumber(e.branch_ratio))),
      });
    } else {
      const kept = doc.hints.filter((h) => toNumber(h.effect.recovered) >= minRecovery);
      const rank = kept.findIndex((h) => h.calibration_node === entry.planted.calibration_node && h.cause === entry.planted.cause);
      planted.push({ name: entry.name, ...entry.planted, rank: rank >= 0 ? rank + 1 : null, hints: kept.length,
        recovered: rank >= 0 ? toNumber(kept[rank].effect.recovered) : null });
    }
    process.stderr.write(`${entry.name}: ${Date.now() - t0} ms\n`);
  }
  const all = [...causes];
  console.log(`Rule cut-offs: ${Object.entries(HINT_RULES).map(([k, v]) => `${k} ${v}`).join(', ')}; min_recovery ${minRecovery}.\n`);
  console.log(`| model | quantizers | start | ${all.map((c) => `${c} (fired / kept)`).join(' | ')} |`);
  console.log(`|---|---|---|${all.map(() => '---').join('|')}|`);
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.examined} | ${fmt(r.start, 6)} | ${all.map((c) => `${r.fired[c]} / ${r.kept[c]}`).join(' | ')} |`);
  }
  console.log('\nClean models, the evidence nearest each cut-off:\n');
  console.log('| model | largest share clipped | smallest occupied | largest channel spread (per tensor) | largest Concat branch ratio | (Add, Mul, Sum) |');
  console.log('|---|---|---|---|---|---|');
  for (const e of extremes) console.log(`| ${e.name} | ${fmt(e.clipped)} | ${fmt(e.occupied)} | ${fmt(e.spread)} | ${fmt(e.branch)} | ${fmt(e.otherBranch)} |`);
  console.log('\nPlanted models, the planted quantizer among the hints (default min_recovery):\n');
  console.log('| model | planted quantizer | cause | rank | hints | recovered |');
  console.log('|---|---|---|---|---|---|');
  for (const p of planted) console.log(`| ${p.name} | ${p.calibration_node} | ${p.cause} | ${p.rank ?? 'missing'} | ${p.hints} | ${p.recovered === null ? '' : fmt(p.recovered)} |`);
}

runMain(main);
