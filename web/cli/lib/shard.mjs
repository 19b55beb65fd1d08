// Sweeps beyond one machine: `--shard K/N` on a sweep-like command (one whose core analysis
// describe() marks `splittable`) runs part K of N of the sweep's items (the core's listItems, cut by
// the pool's rule, web/pipeline/sweep.mjs partOf: item i goes to shard i mod N + 1) and writes a
// partial result document; `ptqscope merge PART...` checks that the parts are the N shards of one
// run and joins their results with the core's mergeResults (docs/cli-shards.md).
//
// A partial result (version 1):
//   { "schema": "ptqscope.shard", "version": 1, "command": "<sub-command>", "shard": {"index": K, "count": N},
//     "options": {<the command's options, without --json/--quiet/--workers/--shard/--config/--memory>},
//     "inputs": {"model_sha256", "data_sha256"}, "result": <the core's result document of the shard's items> }
import crypto from 'node:crypto';
import fs from 'node:fs';
import { UsageError } from './errors.mjs';

export const SHARD_SCHEMA = 'ptqscope.shard';
export const SHARD_VERSION = 1;

// "K/N" -> {index: K, count: N} with 1 <= K <= N.
export function parseShard(text) {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m) throw new Error(`'${text}' is not K/N (shard K of N, e.g. 2/8)`);
  const [index, count] = [Number(m[1]), Number(m[2])];
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`N must be a whole number of at least 1 (got '${text}')`);
  if (index < 1 || index > count) throw new Error(`K must be between 1 and N (got '${text}')`);
  return { index, count };
}

export const SHARD_OPTION = {
  name: 'shard', flags: ['--shard'], metavar: 'K/N', parse: parseShard,
  help: 'run only shard K of N of the sweep (items K, K+N, K+2N, ...) and write that partial result to --json; ' +
    'join the N parts with `ptqscope merge`',
};

// The options a shard records and every shard of one run must share: the command's options but
// where the partial goes, progress, the worker count, the shard itself and the configuration's path
// (the resolved configuration is in the result, compared by the core's merge).
const NOT_RECORDED = new Set(['json', 'quiet', 'workers', 'shard', 'config', 'memory']);
const recordedOptions = (o) => Object.fromEntries(Object.entries(o).filter(([k]) => !NOT_RECORDED.has(k)));

// chunks: [{path, bytes}] or [{path, file}] (read here one at a time).
function digest(chunks) {
  const h = crypto.createHash('sha256');
  for (const { path, file, bytes = fs.readFileSync(file) } of chunks) {
    h.update(`${path}\0${bytes.length}\0`);
    h.update(bytes);
  }
  return h.digest('hex');
}

// What identifies the inputs of a run: the model (with its external data files) and the calibration data.
export function inputDigests(model, externalFiles, files) {
  return {
    model_sha256: digest([{ path: '', bytes: model }, ...externalFiles]),
    data_sha256: digest(files),
  };
}

export function shardDocument(command, o, inputs, result) {
  return { schema: SHARD_SCHEMA, version: SHARD_VERSION, command, shard: o.shard, options: recordedOptions(o), inputs, result };
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const shardText = (s) => `${s.index}/${s.count}`;

// Checks that `parts` ([{file, doc}], the parsed partial results) are the N shards of one run of a
// sweep-like command: each a partial result of this version, one command, options, inputs and N, no
// shard twice, none missing. `commandOf(name)` gives the command module (null: unknown) and
// `flagOf(command, option)` how a message names an option. Throws a UsageError naming the file.
export function checkShards(parts, { commandOf, isSweepCommand, flagOf }) {
  for (const { file, doc } of parts) {
    if (doc?.schema !== SHARD_SCHEMA) {
      throw new UsageError(`${file}: not a partial result of --shard (its "schema" is ${JSON.stringify(doc?.schema ?? null)}, expected "${SHARD_SCHEMA}")`);
    }
    if (doc.version !== SHARD_VERSION) {
      throw new UsageError(`${file}: partial result version ${JSON.stringify(doc.version)} is not supported (this ptqscope reads version ${SHARD_VERSION})`);
    }
    if (!commandOf(doc.command)) throw new UsageError(`${file}: unknown command ${JSON.stringify(doc.command)}`);
    if (!isSweepCommand(doc.command)) {
      throw new UsageError(`${file}: '${doc.command}' is not a sweep split into items, so it has no shards to merge`);
    }
    const s = doc.shard;
    if (!(Number.isSafeInteger(s?.count) && s.count >= 1 && Number.isSafeInteger(s.index) && s.index >= 1 && s.index <= s.count)) {
      throw new UsageError(`${file}: "shard" must be {"index": K, "count": N} with 1 <= K <= N, got ${JSON.stringify(s ?? null)}`);
    }
    for (const field of ['options', 'inputs', 'result']) {
      if (!doc[field] || typeof doc[field] !== 'object' || Array.isArray(doc[field])) throw new UsageError(`${file}: "${field}" is missing or not an object`);
    }
  }
  const [first] = parts;
  const f = first.doc;
  const bySlot = new Map();
  for (const part of parts) {
    const { file, doc } = part;
    const differs = (what) => new UsageError(`${file}: ${what} than ${first.file}: not shards of one run`);
    if (doc.command !== f.command) throw differs(`made by '${doc.command}', another command`);
    if (doc.shard.count !== f.shard.count) {
      throw new UsageError(`${file}: shard ${shardText(doc.shard)}, but ${first.file} is shard ${shardText(f.shard)}: not shards of one run`);
    }
    if (doc.inputs.model_sha256 !== f.inputs.model_sha256) throw differs('made from another model (its sha256 differs)');
    if (doc.inputs.data_sha256 !== f.inputs.data_sha256) throw differs('made from other calibration data (their sha256 differs)');
    for (const key of new Set([...Object.keys(f.options), ...Object.keys(doc.options)])) {
      if (!same(doc.options[key], f.options[key])) {
        throw differs(`made with ${flagOf(doc.command, key)} ${JSON.stringify(doc.options[key] ?? null)}, another value (${JSON.stringify(f.options[key] ?? null)})`);
      }
    }
    const other = bySlot.get(doc.shard.index);
    if (other) throw new UsageError(`${file}: shard ${shardText(doc.shard)} is given twice (also ${other.file})`);
    bySlot.set(doc.shard.index, part);
  }
  const missing = [];
  for (let k = 1; k <= f.shard.count; k++) if (!bySlot.has(k)) missing.push(`${k}/${f.shard.count}`);
  if (missing.length) {
    const list = missing.length > 10 ? `${missing.slice(0, 10).join(', ')} and ${missing.length - 10} more` : missing.join(', ');
    const given = parts.length > 10 ? '' : ` (${parts.map((p) => `${p.file} = ${shardText(p.doc.shard)}`).join(', ')})`;
    throw new UsageError(`shard${missing.length > 1 ? 's' : ''} ${list} missing: ${parts.length} of ${f.shard.count} parts given${given}`);
  }
  // Shard order: the core's merge takes the shared fields from the first part.
  return [...bySlot.keys()].sort((a, b) => a - b).map((k) => bySlot.get(k));
}
