// `ptqscope merge PART... [--json FILE] [--save_dir DIR] [--quiet]` — ours: joins the partial results
// that `--shard K/N` runs of one sweep-like command wrote (lib/shard.mjs) into the result the command
// gives unsharded, through the core's mergeResults, and writes what that command writes: --json the
// result document, and the command's own outputs (the charts in its -s/--save_dir, the -v table)
// with the options the shards were run with. Parts of another command, model, calibration data,
// options or shard count, a shard given twice or missing, are refused (exit 2, naming the file).
import { parseArgs } from '../lib/args.mjs';
import { writeJson } from '../lib/analysis.mjs';
import { UsageError } from '../lib/errors.mjs';
import { readTextInput } from '../lib/files.mjs';
import { checkOutputs, withOutputs } from '../lib/outputs.mjs';
import { createProgress } from '../lib/progress.mjs';
import { checkShards } from '../lib/shard.mjs';
import { loadPtqModule } from '../lib/wasm.mjs';
import { isSplittable } from '../../pipeline/sweep.mjs';
import { COMMANDS } from './index.mjs';

export const summary = 'join the partial results of --shard K/N runs into the unsharded result (ptqscope)';
export const usage = `usage: ptqscope merge PART... [--json FILE] [--save_dir DIR] [--quiet]

  PART            the partial results (--json of each \`--shard K/N\` run), all N of one run, any order
  --json FILE     write the merged result document (identical to the unsharded run's --json but for
                  its wall-clock timings_ms)
  --save_dir DIR  where a chart command's charts go (default: the -s/--save_dir the shards were run with)
  --quiet         no messages on stderr

Also writes what the sharded command writes unsharded: its charts, or its table with -v True.`;

const SPEC = {
  positionals: ['PART...'],
  options: { json: {}, save_dir: {}, quiet: { flag: true } },
};

// The sweep-like commands: those whose core analysis is splittable (describe()).
async function commandOf(name) {
  if (!Object.hasOwn(COMMANDS, name) || name === 'merge') return null;
  return COMMANDS[name]();
}

// How a message names option `key` of `command` ('--node_type').
function flagOf(command, key) {
  const opt = command?.SPEC?.options?.find((o) => o.name === key);
  return opt ? opt.flags.at(-1) : `option '${key}'`;
}

function readPart(file) {
  const text = readTextInput(file, 'the partial result');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file}: not a JSON document: ${err.message}`);
  }
}

export async function main(argv, { log = console.log } = {}) {
  const { options, positionals: files } = parseArgs(argv, SPEC);
  for (const f of files) if (f.startsWith('-') && f !== '-') throw new UsageError(`unknown option ${f}`, { showUsage: true });
  const parts = files.map((file) => ({ file, doc: readPart(file) }));
  // The modules of the commands the parts name, loaded before the (synchronous) checks.
  const modules = new Map();
  for (const { doc } of parts) {
    const name = typeof doc?.command === 'string' ? doc.command : null;
    if (name && !modules.has(name)) modules.set(name, await commandOf(name));
  }
  const ordered = checkShards(parts, {
    commandOf: (name) => modules.get(name) ?? null,
    isSweepCommand: (name) => Boolean(modules.get(name)?.present) && isSplittable(modules.get(name).analysis),
    flagOf: (name, key) => flagOf(modules.get(name), key),
  });
  const name = ordered[0].doc.command;
  const command = modules.get(name);
  const o = { ...ordered[0].doc.options };
  if (options.save_dir !== undefined) {
    if (!command.outputDirs.includes('save_dir')) throw new UsageError(`--save_dir: ${name} writes no charts (its parts hold no folder to write)`);
    o.save_dir = options.save_dir;
  }
  checkOutputs([
    ...command.outputDirs.map((key) => ({ path: o[key], kind: 'dir', option: key === 'save_dir' ? '--save_dir' : flagOf(command, key) })),
    { path: options.json, kind: 'file', option: '--json' },
  ]);
  const ptq = await loadPtqModule();
  let merged;
  try {
    merged = JSON.parse(ptq.mergeResults(JSON.stringify(ordered.map((p) => p.doc.result))));
  } catch (err) {
    // The core compares the parts' results ("mergeResults: results[1].options differs from results[0]
    // (...)"): name the files ("p2.json: options differs from p1.json (...)").
    if (err?.name === 'PtqError' || err?.name === 'FormatError') {
      err.message = err.message.replace(/^mergeResults: /, '')
        .replace(/results\[(\d+)\](\.)?/g, (m, k, dot) => (ordered[Number(k)] ? `${ordered[Number(k)].file}${dot ? ': ' : ''}` : m));
    }
    throw err;
  }
  const progress = createProgress({ quiet: options.quiet });
  await withOutputs(async () => {
    await command.present(merged, o, { log, progress });
    if (options.json) writeJson(options.json, merged);
  });
  return 0;
}
