// What every analysis subcommand shares: our options beside the original's (--json, --quiet,
// --workers), the worker pool on the wasm core, loading the model and data once per worker, running
// a request with progress on stderr, and writing the result document.
import os from 'node:os';
import path from 'node:path';
import { CONVOLUTION_MODES, RELATION_RULES, optionDefault } from '../../pipeline/catalog.mjs';
import { createPool, poolSizeFor } from '../../pipeline/pool.mjs';
import { spawnNodeWorker } from '../../pipeline/node_worker.mjs';
import { isSplittable, runAnalysis } from '../../pipeline/sweep.mjs';
import { withoutNone } from '../../pipeline/runall.mjs';
import { parseClick, parseClickInt } from './click.mjs';
import { UsageError } from './errors.mjs';
import { listCalibrationFolder, readExternalData, readModelFile, readTextInput } from './files.mjs';
import { keepListFormat } from './keep_list.mjs';
import { checkOutputs, withOutputs, writeOutput } from './outputs.mjs';
import { createProgress } from './progress.mjs';
import { SHARD_OPTION, inputDigests, shardDocument } from './shard.mjs';
import { MEMORY_OPTION, reportMemory } from './memory.mjs';
import { engineModulePath, loadPtqModule } from './wasm.mjs';

export const defaultWorkers = () => Math.max(1, Math.min(8, os.availableParallelism?.() ?? os.cpus().length));

function parseWorkers(n) {
  if (!(n >= 1 && n <= 64)) throw new Error(`must be between 1 and 64 (got ${n})`);
  return n;
}

// The convolution kernels (docs/compatibility.md, float accuracy), as the core describes them: the
// default first; the core validates the name.
export const CONV_OPTION = { name: 'conv', flags: ['--conv'], metavar: 'MODE', default: CONVOLUTION_MODES[0].name,
  help: `convolution kernels: ${CONVOLUTION_MODES.map((m, i) => `'${m.name}'${i ? '' : ' (default)'}: ${m.doc}`).join('; ')}` };

// The relation rules (§1.9) by the toolchain version that made the model, as the core describes them:
// the default first.
export const RELATIONS_OPTION = { name: 'relations', flags: ['--relations'], choices: RELATION_RULES.map((r) => r.name), default: RELATION_RULES[0].name,
  help: `how calibration nodes relate to the nodes reading them: ${RELATION_RULES.map((r, i) => `'${r.name}'${i ? '' : ' (default)'}: ${r.doc}`).join('; ')}` };

// ptqscope's own options, accepted by every analysis subcommand.
export const COMMON_OPTIONS = [
  { name: 'json', flags: ['--json'], metavar: 'FILE', help: 'write the result document (docs/result-schema.md) to FILE' },
  { name: 'quiet', flags: ['--quiet'], flag: true, help: 'no progress on stderr' },
  { name: 'workers', flags: ['--workers', '--threads'], type: 'int', parse: parseWorkers, metavar: 'N',
    help: `worker threads for sweeps (default: the CPU count, at most 8: ${defaultWorkers()}; fewer for a model over 1 GiB)` },
  CONV_OPTION,
  RELATIONS_OPTION,
  { name: 'config', flags: ['--config'], metavar: 'FILE',
    help: 'run under this quantization configuration (docs/config-schema.md) instead of the model as calibrated' },
  MEMORY_OPTION,
];

// The options of a command running `analysis`: the common ones, and --shard K/N when the core
// splits the analysis into items (describe(): splittable), i.e. for the sweep-like commands.
export const analysisOptions = (analysis) => [...COMMON_OPTIONS, ...(isSplittable(analysis) ? [SHARD_OPTION] : [])];

// The --config document (docs/config-schema.md), read as JSON; the core checks it against the model.
export function readConfigFile(file) {
  const text = readTextInput(file, 'the configuration');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file}: not a JSON document: ${err.message}`);
  }
}

// The request fields every analysis of one command shares: the model's file name and the configuration.
export function requestBase(ctx) {
  return { model_file: ctx.modelFile, ...(ctx.config ? { config: ctx.config } : {}) };
}

// The core's default of an analysis option (its describe() document) as the original's click option
// holds it: a list of one name (metrics) is that name, as click's default string "cosine-similarity".
export function clickDefault(analysis, option) {
  const d = optionDefault(analysis, option);
  return Array.isArray(d) && d.length === 1 ? d[0] : d;
}

// A list argument in the original's keep_list_format syntax (§9.1).
export const listOption = (name, flags, help, extra = {}) => ({ name, flags, type: 'str', parse: keepListFormat, help, ...extra });

// Loads the model and calibration data into a fresh pool. The caller closes the pool.
export async function openAnalysis(modelPath, dataDir, options) {
  const model = readModelFile(modelPath);
  const externalFiles = readExternalData(await loadPtqModule(), modelPath, model);
  // Listed, not read: each worker reads a sample's files when the core uses that sample.
  const files = listCalibrationFolder(dataDir);
  const modulePath = engineModulePath();
  const modelBytes = externalFiles.reduce((sum, f) => sum + f.bytes.length, model.length);
  const pool = createPool({ size: options.workers ?? poolSizeFor(defaultWorkers(), modelBytes), spawn: () => spawnNodeWorker(modulePath) });
  try {
    const loaded = await pool.load({ model, externalFiles, files, modelName: modelPath, dataName: dataDir, convolution: options.conv ?? undefined,
      relations: options.relations ?? undefined });
    for (const w of loaded.summary?.warnings ?? []) process.stderr.write(`${modelPath}: warning: ${w}\n`);
    // A shard records what it ran on, so that `merge` refuses parts of other inputs.
    const inputs = options.shard ? inputDigests(model, externalFiles, files) : undefined;
    return { pool, ...loaded, modelFile: path.basename(modelPath), inputs };
  } catch (err) {
    pool.close();
    throw err;
  }
}

// Runs one request with a progress bar; returns the result document.
export async function runWithProgress(ctx, analysis, options, { progress, label }) {
  progress.stage(ctx.shard ? `${label} (shard ${ctx.shard.index}/${ctx.shard.count})` : label);
  const doc = await runAnalysis(ctx.pool, { analysis, options: withoutNone(options), ...requestBase(ctx) }, {
    onProgress: (done, total, eta) => progress.update(done, total, eta),
    shard: ctx.shard ?? undefined,
  });
  progress.end();
  return doc;
}

export function writeJson(file, doc) {
  writeOutput(file, `${JSON.stringify(doc, null, 1)}\n`);
}

// The common skeleton of an analysis subcommand: check the output paths (--json, the folder
// options named in `dirs`, e.g. ['save_dir'], and the file options in `files`, e.g.
// [['config_out', '--config-out']]), parse, open, run `body(ctx)` -> document, --json.
// Files are written through lib/outputs.mjs (writeOutput inside body): all or nothing.
export async function analysisMain(opts, positionals, body, { dirs = [], files = [] } = {}) {
  const [modelPath, dataDir] = positionals;
  checkOutputs([
    ...dirs.map((name) => ({ path: opts[name], kind: 'dir', option: optionFlag(name) })),
    { path: opts.json, kind: 'file', option: '--json' },
    ...files.map(([name, option]) => ({ path: opts[name], kind: 'file', option })),
  ]);
  const config = opts.config ? readConfigFile(opts.config) : null;
  const progress = createProgress({ quiet: opts.quiet });
  const ctx = await openAnalysis(modelPath, dataDir, opts);
  try {
    return await withOutputs(async () => {
      const doc = await body({ ...ctx, progress, config, shard: opts.shard ?? null });
      if (opts.json) writeJson(opts.json, doc);
      if (opts.memory) reportMemory(await ctx.pool.memory(), 'worker');
      return doc;
    });
  } catch (err) {
    // The core names the configuration's field ("config.intents[0].node: ..."); say which file it is.
    if (config && err?.name === 'PtqError' && /^config[. ]/.test(err.message)) err.message = `${opts.config}: ${err.message}`;
    // The model has ops the core cannot run (summary.unsupported) and the analysis needed a run: the
    // command entry says which commands still work.
    if (ctx.summary?.unsupported?.length && err?.name === 'PtqError' && /cannot run /.test(err.message)) err.cannotRun = true;
    throw err;
  } finally {
    ctx.pool.close();
  }
}

// main of a sweep-like command `name` (its analysis is splittable). The command's module exports
// SPEC, analysis, outputDirs (its folder options), compute(ctx, o) -> the result document, and
// present(doc, o, {log, progress}), which writes what the command writes besides --json (charts, the
// verbose table); `ptqscope merge` calls present on the merged document. Without --shard: compute
// and present. With --shard K/N: shard K's partial result (lib/shard.mjs) into --json, nothing else.
export async function sweepMain(name, argv, io = {}) {
  const { COMMANDS } = await import('../commands/index.mjs');
  const command = await COMMANDS[name]();
  const { options: o, positionals } = parseClick(argv, command.SPEC);
  if (o.shard && !o.json) {
    throw new UsageError(`--shard ${o.shard.index}/${o.shard.count} writes a partial result: give --json FILE (and join the parts with ptqscope merge)`);
  }
  if (o.shard) {
    await analysisMain(o, positionals, async (ctx) => shardDocument(name, o, ctx.inputs, await command.compute(ctx, o)));
  } else {
    await analysisMain(o, positionals, async (ctx) => {
      const doc = await command.compute(ctx, o);
      await command.present(doc, o, { log: io.log ?? console.log, progress: ctx.progress });
      return doc;
    }, { dirs: command.outputDirs });
  }
  return 0;
}

// '--save_dir' for 'save_dir': how a message names an option.
const optionFlag = (name) => `--${name}`;

export { UsageError, parseClickInt };
