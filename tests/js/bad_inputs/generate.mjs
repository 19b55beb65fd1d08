#!/usr/bin/env node
// The bad-input catalogue: models, calibration data, options and output paths that ptqscope must
// reject with exit code 2 and a message naming the culprit, no stack trace and no output left behind.
// Generated from the calibrated digits example (model + calibration_data) and its float model.
//
//   generateCatalogue(dir, {model, data, floatModel}) -> [case]   writes every input under dir/inputs
//   node tests/js/bad_inputs/generate.mjs OUT_DIR MODEL DATA FLOAT_MODEL   -> OUT_DIR/cases.json
//
// A case: {id, group: model|data|options|output, args, culprit, says?, page?}. `says`: a pattern the
// message must match besides naming the culprit. `args` are the CLI arguments;
// `culprit` is text the error message must contain (the file, node, option or path at fault);
// `page` (some model and data cases) names the file or folder to open on the web page, where the
// error banner must show the same culprit (or `page.culprit` where the page names it differently);
// with `page.run` the model and then the data folder are opened and the error comes from running an
// analysis (a model that loads but cannot run). Each case is run with its own empty working folder
// (`{work}` in args): nothing may appear in it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as W from './onnx_wire.mjs';
import { encodeNpy } from '../../../web/cli/lib/npy.mjs';

const WORK = '{work}'; // replaced by the case's working folder

// Case helpers: a command with the standard outputs in the working folder.
// One worker: each case loads the wasm core once (CI time).
const analysis = (command, model, data, ...rest) => [command, model, data, ...rest, '--json', `${WORK}/result.json`, '--quiet', '--workers', '1'];
const charts = (command, model, data, ...rest) => analysis(command, model, data, '-s', `${WORK}/charts`, ...rest);

// What a file that is no ONNX model is called (the core's reader, CLI and page alike), never how its
// bytes fail to parse as protobuf.
const NOT_ONNX = /not an ONNX model/;

export function generateCatalogue(dir, { model, data, floatModel }) {
  const inputs = path.join(dir, 'inputs');
  fs.rmSync(inputs, { recursive: true, force: true });
  fs.mkdirSync(inputs, { recursive: true });
  const at = (...p) => path.join(inputs, ...p);
  const write = (rel, bytes) => {
    fs.mkdirSync(path.dirname(at(rel)), { recursive: true });
    fs.writeFileSync(at(rel), bytes);
    return at(rel);
  };
  const modelBytes = fs.readFileSync(model);
  const decoded = W.decode(modelBytes);
  const nodes = W.nodesOf(decoded);
  const nodeNamed = (op) => nodes.find((n) => W.nameOf(n, 4) === op);
  const conv = nodeNamed('Conv');
  const convName = W.nameOf(conv);
  const cali = nodeNamed('HzCalibration');
  const caliName = W.nameOf(cali);
  const inputName = W.nameOf(W.all(W.graphOf(decoded), 11)[0].value.fields, 1);
  const sampleFiles = fs.readdirSync(path.join(data, inputName)).filter((f) => !f.startsWith('.')).sort();
  const sample = fs.readFileSync(path.join(data, inputName, sampleFiles[0]));

  // A model edited by fn(decodedCopy).
  const edited = (name, fn) => {
    const m = W.clone(decoded);
    fn(m);
    return write(`models/${name}.onnx`, W.encode(m));
  };
  // A calibration folder: the example's samples with `files` ({relative path: bytes | null}) changed.
  const dataWith = (name, files) => {
    const root = at('data', name);
    fs.cpSync(data, root, { recursive: true });
    for (const [rel, bytes] of Object.entries(files)) {
      const p = path.join(root, rel);
      if (bytes === null) fs.rmSync(p, { recursive: true, force: true });
      else {
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, bytes);
      }
    }
    return root;
  };
  const npyOf = (dtype, dims, values) => Buffer.from(encodeNpy(dtype, dims, values));
  const last = `${inputName}/${sampleFiles.at(-1)}`;

  const cases = [];
  const add = (group, id, args, culprit, extra = {}) => cases.push({ id: `${group}-${id}`, group, args, culprit, ...extra });
  const sens = (m, d, ...rest) => analysis('get-sensitivity-of-nodes', m, d, ...rest);

  // ---- models ----------------------------------------------------------------------------------
  const truncated = write('models/truncated.onnx', modelBytes.subarray(0, modelBytes.length >> 1));
  add('model', 'truncated', sens(truncated, data), 'truncated.onnx', { says: /not a valid ONNX model \(damaged or truncated\)/, page: { model: truncated } });
  const empty = write('models/empty.onnx', Buffer.alloc(0));
  add('model', 'empty', sens(empty, data), 'empty.onnx', { says: NOT_ONNX, page: { model: empty } });
  const garbage = write('models/garbage.onnx', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24)));
  add('model', 'garbage', sens(garbage, data), 'garbage.onnx', { says: NOT_ONNX, page: { model: garbage } });
  const npyAsModel = write('models/sample.onnx', sample);
  add('model', 'npy-as-model', sens(npyAsModel, data), 'sample.onnx', { says: NOT_ONNX });
  // Files a user may pick by mistake: a PNG image, a text file, each named .onnx.
  const png = write('models/photo.onnx', Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x02\0\0\0', 'latin1')]));
  add('model', 'png-as-model', sens(png, data), 'photo.onnx', { says: NOT_ONNX, page: { model: png } });
  const text = write('models/notes.onnx', Buffer.from('# Notes\n\nThis is the README of a model, not the model.\n'));
  add('model', 'text-as-model', sens(text, data), 'notes.onnx', { says: NOT_ONNX, page: { model: text } });
  add('model', 'missing', sens(at('models/missing.onnx'), data), 'missing.onnx');
  fs.mkdirSync(at('models/folder.onnx'), { recursive: true });
  add('model', 'directory', sens(at('models/folder.onnx'), data), 'folder.onnx');
  fs.symlinkSync(at('models/nowhere.onnx'), at('models/broken-link.onnx'));
  add('model', 'broken-link', sens(at('models/broken-link.onnx'), data), 'broken-link.onnx');
  execFileSync('mkfifo', [at('models/fifo.onnx')]);
  add('model', 'fifo', sens(at('models/fifo.onnx'), data), 'fifo.onnx');
  const convOf = (m) => W.nodesOf(m).find((n) => W.nameOf(n) === convName);
  const caliOf = (m) => W.nodesOf(m).find((n) => W.nameOf(n) === caliName);
  const unknownOp = edited('unknown-op', (m) => {
    W.first(convOf(m), 4).value = Buffer.from('FancyConv');
  });
  add('model', 'unknown-op', sens(unknownOp, data), 'FancyConv', { page: { model: unknownOp } });
  const undefinedInput = edited('undefined-input', (m) => {
    W.all(convOf(m), 1)[0].value = Buffer.from('no_such_tensor');
  });
  add('model', 'undefined-input', sens(undefinedInput, data), 'no_such_tensor');
  const cycle = edited('cycle', (m) => {
    W.all(convOf(m), 1)[0].value = Buffer.from(W.text(W.all(conv, 2)[0]));
  });
  add('model', 'cycle', sens(cycle, data), convName);
  // A weight initializer (rank >= 2, raw_data): its data cut short, then a negative dim.
  const shortName = W.nameOf(W.initializersOf(decoded).find((f) => W.first(f, 9) && W.dimsOf(f).length >= 2), 8);
  const weightOf = (m) => W.initializersOf(m).find((f) => W.nameOf(f, 8) === shortName);
  const shortInit = edited('short-initializer', (m) => {
    const raw = W.first(weightOf(m), 9);
    raw.value = Buffer.from(raw.value).subarray(0, raw.value.length - 4);
  });
  add('model', 'short-initializer', sens(shortInit, data), shortName, { page: { model: shortInit } });
  const negativeDim = edited('negative-dim', (m) => {
    const t = weightOf(m);
    W.setDims(t, [-3n, ...W.dimsOf(t).slice(1)]);
  });
  add('model', 'negative-dim', sens(negativeDim, data), shortName);
  const badKernel = edited('kernel-shape', (m) => {
    W.setInts(W.attribute(convOf(m), 'kernel_shape'), [5, 5]);
  });
  add('model', 'conv-kernel-shape', sens(badKernel, data), convName);
  const badPads = edited('pads', (m) => {
    W.setInts(W.attribute(convOf(m), 'pads'), [-2, -2, -2, -2]);
  });
  add('model', 'conv-negative-pads', sens(badPads, data), convName);
  const zeroGroup = edited('group-zero', (m) => {
    const a = W.attribute(convOf(m), 'group');
    if (a) W.first(a, 3).value = 0n;
    else convOf(m).push(W.msg(5, 'Attribute', W.attrInt('group', 0)));
  });
  add('model', 'conv-group-zero', sens(zeroGroup, data), convName);
  const withThresholds = (name, values) => edited(name, (m) => {
    const c = caliOf(m);
    const kept = c.filter((f) => !(f.no === 5 && W.nameOf(f.value.fields, 1) === 'thresholds'));
    c.splice(0, c.length, ...kept, W.msg(5, 'Attribute', W.attrFloats('thresholds', values)));
  });
  add('model', 'negative-threshold', sens(withThresholds('negative-threshold', [-1]), data), caliName);
  add('model', 'nan-threshold', sens(withThresholds('nan-threshold', [NaN]), data), caliName);
  const noThresholds = edited('no-thresholds', (m) => {
    const c = caliOf(m);
    c.splice(0, c.length, ...c.filter((f) => !(f.no === 5 && ['thresholds', 'scales'].includes(W.nameOf(f.value.fields, 1)))));
  });
  add('model', 'no-thresholds', sens(noThresholds, data), caliName);
  const badQtype = edited('qtype', (m) => {
    const c = caliOf(m);
    c.splice(0, c.length, ...c.filter((f) => !(f.no === 5 && W.nameOf(f.value.fields, 1) === 'qtype')), W.msg(5, 'Attribute', W.attrString('qtype', 'int3x')));
  });
  add('model', 'bad-qtype', sens(badQtype, data), 'int3x');
  const relu = nodeNamed('Relu');
  const twoProducers = edited('two-producers', (m) => {
    const r = W.nodesOf(m).find((n) => W.nameOf(n) === W.nameOf(relu));
    W.all(r, 2)[0].value = Buffer.from(W.text(W.all(conv, 2)[0]));
  });
  add('model', 'two-producers', sens(twoProducers, data), W.text(W.all(conv, 2)[0]));

  // Sizes: declared shapes and element counts that overflow 64-bit arithmetic or exceed what one
  // buffer of the 4 GB wasm heap can hold, in initializers (read time) and in shapes computed at run
  // time. Small models x [1, 1, 2, 2] -> ... -> HzCalibration -> out, with one sample.
  const T40 = 2n ** 40n;
  const f32Bytes = (n) => Buffer.from(new Float32Array(n).fill(1).buffer);
  const i64Bytes = (values) => Buffer.from(new BigInt64Array(values.map(BigInt)).buffer);
  const smallData = at('data/small');
  write('data/small/x/0.npy', npyOf('float32', [1, 1, 2, 2], Float32Array.from([1, -2, 3, -4])));
  const small = (name, nodes, initializers, inputDims = [1, 1, 2, 2]) => write(`models/${name}.onnx`, W.makeModel({
    inputs: [['x', W.ELEM.FLOAT, inputDims]], outputs: [['out', W.ELEM.FLOAT, []]], initializers, opsets: [['', 13], ['horizon', 1]],
    nodes: [...nodes, { name: 'y_HzCalibration', op: 'HzCalibration', domain: 'horizon', inputs: ['y'], outputs: ['out'], attributes: [W.attrFloats('thresholds', [8])] }],
  }));
  // x + w, w an initializer of the given dims and raw bytes.
  const addInit = (name, dims, raw) => small(name, [{ name: 'add_w', op: 'Add', inputs: ['x', 'w'], outputs: ['y'] }],
    [{ name: 'w', elemType: W.ELEM.FLOAT, dims, raw }]);
  // Relu(x) -> op(r, shape) with an int64 shape initializer.
  const shaped = (name, op, node, values) => small(name, [
    { name: 'relu', op: 'Relu', inputs: ['x'], outputs: ['r'] },
    { name: node, op, inputs: ['r', 'shape'], outputs: ['y'] },
  ], [{ name: 'shape', elemType: W.ELEM.INT64, dims: [values.length], raw: i64Bytes(values) }]);
  const sizeCase = (id, file, culprit, page = false) => add('model', `size-${id}`, sens(file, smallData), culprit, page ? { page: { model: file } } : {});
  sizeCase('initializer-2p40-squared', addInit('init-2p40', [T40, T40], f32Bytes(1)), "tensor 'w'", true);
  sizeCase('initializer-bytes-overflow', addInit('init-bytes-overflow', [2n ** 31n, 2n ** 31n, 4n], f32Bytes(4)), "tensor 'w'");
  sizeCase('initializer-beyond-heap', addInit('init-heap', [2 ** 20, 2 ** 20], f32Bytes(1)), "tensor 'w'", true);
  sizeCase('initializer-raw-too-long', addInit('init-long', [2, 2], f32Bytes(5)), "tensor 'w'");
  sizeCase('int64-initializer-raw-too-long', small('init-int64-long', [{ name: 'reshape', op: 'Reshape', inputs: ['x', 'shape'], outputs: ['y'] }],
    [{ name: 'shape', elemType: W.ELEM.INT64, dims: [2], raw: i64Bytes([1, 4, 4]) }]), "tensor 'shape'");
  sizeCase('expand-2p40-squared', shaped('expand-2p40', 'Expand', 'big_expand', [T40, T40, 1, 1]), "node 'big_expand' (Expand)");
  sizeCase('expand-beyond-heap', shaped('expand-heap', 'Expand', 'big_expand', [2 ** 20, 2 ** 20, 1, 1]), "node 'big_expand' (Expand)");
  sizeCase('expand-overflow', shaped('expand-overflow', 'Expand', 'big_expand', [2n ** 32n, 2n ** 32n, 2n ** 32n, 1, 1, 1]), "node 'big_expand' (Expand)");
  sizeCase('expand-negative', shaped('expand-negative', 'Expand', 'big_expand', [-5, 1, 1, 1]), "node 'big_expand' (Expand)");
  sizeCase('reshape-2p40-squared', shaped('reshape-2p40', 'Reshape', 'big_reshape', [T40, T40]), "node 'big_reshape' (Reshape)");
  sizeCase('reshape-int64-min', shaped('reshape-min', 'Reshape', 'big_reshape', [-(2n ** 63n), 4]), "node 'big_reshape' (Reshape)");
  sizeCase('tile-2p40-squared', shaped('tile-2p40', 'Tile', 'big_tile', [T40, T40, 1, 1]), "node 'big_tile' (Tile)");
  sizeCase('constant-of-shape-2p40-squared', small('fill-2p40', [
    { name: 'big_fill', op: 'ConstantOfShape', inputs: ['shape'], outputs: ['c'] },
    { name: 'add_c', op: 'Add', inputs: ['x', 'c'], outputs: ['y'] },
  ], [{ name: 'shape', elemType: W.ELEM.INT64, dims: [2], raw: i64Bytes([T40, T40]) }]), "node 'big_fill' (ConstantOfShape)");
  // 7 x 2^27 floats = 3.5 GiB: one heap buffer could hold it, the 3 GiB memory budget cannot. On the
  // page the error comes when an analysis runs (`page.run`), with the small data folder.
  add('model', 'size-constant-of-shape-beyond-budget', sens(small('fill-budget', [
    { name: 'big_fill', op: 'ConstantOfShape', inputs: ['shape'], outputs: ['c'] },
    { name: 'add_c', op: 'Add', inputs: ['x', 'c'], outputs: ['y'] },
  ], [{ name: 'shape', elemType: W.ELEM.INT64, dims: [1], raw: i64Bytes([7 * 2 ** 27]) }]), smallData),
  "node 'big_fill' (ConstantOfShape): a float32 tensor of shape [939524096] needs 3758096384 bytes (3.5 GiB)",
  { page: { model: at('models/fill-budget.onnx'), data: smallData, run: true } });
  sizeCase('input-declared-2p40-squared', small('input-2p40', [{ name: 'relu', op: 'Relu', inputs: ['x'], outputs: ['y'] }], [], [T40, T40]),
    "model input 'x'");
  // A node with an empty output list (found by model_exec_fuzz: its kernel wrote outputs[0]).
  add('model', 'node-without-outputs', sens(small('no-outputs', [
    { name: 'relu', op: 'Relu', inputs: ['x'], outputs: ['y'] },
    { name: 'silent', op: 'Relu', inputs: ['y'], outputs: [] },
  ], []), smallData), "node 'silent' (Relu) has no outputs");
  // The same through run (a single forward pass, no analysis).
  add('model', 'size-expand-run', ['run', at('models/expand-heap.onnx'), smallData, '--quant', 'off', '--out', `${WORK}/run`], "node 'big_expand' (Expand)");

  // ---- calibration data ------------------------------------------------------------------------
  add('data', 'missing', sens(model, at('data/missing')), 'data/missing');
  add('data', 'is-a-file', sens(model, truncated), 'truncated.onnx');
  fs.mkdirSync(at('data/empty'), { recursive: true });
  add('data', 'empty', sens(model, at('data/empty')), 'data/empty');
  const wrongFolder = dataWith('wrong-folder', { [`${inputName}`]: null, [`images/${sampleFiles[0]}`]: sample });
  add('data', 'wrong-folder', sens(model, wrongFolder), "images' does not match any input of the model", { page: { data: wrongFolder } });
  const garbageNpy = dataWith('garbage-npy', { [last]: Buffer.from('not a numpy file at all') });
  add('data', 'garbage-npy', sens(model, garbageNpy), sampleFiles.at(-1), { page: { data: garbageNpy } });
  const truncatedNpy = dataWith('truncated-npy', { [last]: sample.subarray(0, sample.length - 16) });
  add('data', 'truncated-npy', sens(model, truncatedNpy), sampleFiles.at(-1));
  const float64 = dataWith('float64', { [last]: npyOf('float64', [1, 1, 8, 8], new Float64Array(64)) });
  add('data', 'wrong-dtype', sens(model, float64), last, { page: { data: float64 } });
  const wrongShape = dataWith('shape', { [last]: npyOf('float32', [1, 1, 9, 9], new Float32Array(81)) });
  add('data', 'wrong-shape', sens(model, wrongShape), last);
  const wrongRank = dataWith('rank', { [last]: npyOf('float32', [64], new Float32Array(64)) });
  add('data', 'wrong-rank', sens(model, wrongRank), last);
  const nan = new Float32Array(64);
  nan[5] = NaN;
  const nanData = dataWith('nan', { [last]: npyOf('float32', [1, 1, 8, 8], nan) });
  add('data', 'nan-sample', sens(model, nanData), last);
  const nested = dataWith('nested', { [`${inputName}/sub/0.npy`]: sample });
  add('data', 'nested-folder', sens(model, nested), `${inputName}/sub`);
  const looseFile = dataWith('loose-file', { 'README.txt': Buffer.from('notes') });
  add('data', 'file-at-top', sens(model, looseFile), 'README.txt');
  const nonUtf8 = dataWith('non-utf8', {});
  fs.writeFileSync(Buffer.concat([Buffer.from(path.join(nonUtf8, inputName, 'bad')), Buffer.from([0xff, 0xfe]), Buffer.from('.npy')]), sample);
  add('data', 'non-utf8-name', sens(model, nonUtf8), 'bad\\xff\\xfe.npy');
  const fifoData = dataWith('fifo', {});
  execFileSync('mkfifo', [path.join(fifoData, inputName, 'zz_fifo.npy')]);
  add('data', 'fifo-sample', sens(model, fifoData), 'zz_fifo.npy');
  const brokenLink = dataWith('broken-link', {});
  fs.symlinkSync(at('nowhere.npy'), path.join(brokenLink, inputName, 'zz_link.npy'));
  add('data', 'broken-link', sens(model, brokenLink), 'zz_link.npy');
  const loop = dataWith('loop', {});
  fs.symlinkSync(loop, path.join(loop, inputName, 'zz_loop'));
  add('data', 'link-loop', sens(model, loop), 'zz_loop');
  add('data', 'data-num-too-large', sens(model, data, '-d', String(sampleFiles.length + 1)),
    `There are only ${sampleFiles.length} data, but data_num is set to ${sampleFiles.length + 1}!`);
  const objectNpy = dataWith('object-npy', { [last]: Buffer.concat([Buffer.from('\x93NUMPY\x01\x00'), Buffer.from([0x76, 0x00]),
    Buffer.from(`{'descr': '|O', 'fortran_order': False, 'shape': (1,), }`.padEnd(117, ' ') + '\n'), Buffer.alloc(8)]) });
  add('data', 'object-dtype', sens(model, objectNpy), sampleFiles.at(-1));

  // A sample whose header declares 2^40 x 2^40 elements (or an element count overflowing 64 bits
  // in bytes) over 16 bytes of data.
  const npyDeclaring = (shape) => {
    const header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}), }`;
    return Buffer.concat([Buffer.from('\x93NUMPY\x01\x00', 'latin1'), Buffer.from([118, 0]),
      Buffer.from(`${header.padEnd(117, ' ')}\n`), Buffer.alloc(16)]);
  };
  write('data/npy-2p40/x/0.npy', npyDeclaring([T40, T40]));
  add('data', 'npy-shape-2p40-squared', sens(at('models/expand-heap.onnx'), at('data/npy-2p40')), 'x/0.npy');
  write('data/npy-overflow/x/0.npy', npyDeclaring([2n ** 32n, 2n ** 32n, 4n]));
  add('data', 'npy-shape-overflow', sens(at('models/expand-heap.onnx'), at('data/npy-overflow')), 'x/0.npy');

  // An out-of-range Gather index in the data: a small model (ids -> Gather(table) -> HzCalibration).
  const table = new Float32Array(12).map((_, i) => i + 1);
  const gatherModel = write('models/gather.onnx', W.makeModel({
    inputs: [['ids', W.ELEM.INT64, [2]]], outputs: [['out', W.ELEM.FLOAT, [2, 3]]],
    initializers: [{ name: 'table', elemType: W.ELEM.FLOAT, dims: [4, 3], raw: Buffer.from(table.buffer) }],
    nodes: [
      { name: 'Gather_0', op: 'Gather', inputs: ['table', 'ids'], outputs: ['g'], attributes: [W.attrInt('axis', 0)] },
      { name: 'g_HzCalibration', op: 'HzCalibration', domain: 'horizon', inputs: ['g'], outputs: ['out'], attributes: [W.attrFloats('thresholds', [12])] },
    ],
    opsets: [['', 13], ['horizon', 1]],
  }));
  const ids = (a, b) => npyOf('int64', [2], new BigInt64Array([BigInt(a), BigInt(b)]));
  write('data/gather/ids/0.npy', ids(0, 3));
  write('data/gather/ids/1.npy', ids(1, 9));
  add('data', 'gather-index-stat-info', analysis('get-calibration-nodes-stat-info', gatherModel, at('data/gather')), 'ids/1.npy');
  add('data', 'gather-index-run', ['run', gatherModel, at('data/gather'), '--quant', 'off', '--out', `${WORK}/run`], '1.npy');

  // ---- options ---------------------------------------------------------------------------------
  add('options', 'unknown-option', sens(model, data, '--fast'), '--fast');
  add('options', 'bad-bool', sens(model, data, '-v', 'maybe'), "'-v' / '--verbose'");
  add('options', 'bad-choice', sens(model, data, '-n', 'tae'), "'tae'");
  add('options', 'bad-int', sens(model, data, '-d', 'three'), "'-d' / '--data_num'");
  const plain = (...rest) => ['get-sensitivity-of-nodes', model, data, '--quiet', ...rest];
  add('options', 'workers-zero', plain('--workers', '0', '--json', `${WORK}/result.json`), '--workers');
  add('options', 'workers-many', plain('--workers', '500', '--json', `${WORK}/result.json`), '--workers');
  add('options', 'bad-metric', sens(model, data, '-m', 'cosine'), 'cosine');
  add('options', 'malformed-list', charts('plot-acc-error', model, data, '-q', '[a'), "'-q' / '--quantize_node'");
  add('options', 'unknown-output-node', sens(model, data, '-o', 'NoSuchNode'), 'NoSuchNode');
  add('options', 'unknown-interested', sens(model, data, '-i', 'NoSuchNode'), 'NoSuchNode');
  add('options', 'distribution-unknown', charts('plot-distribution', model, data, '-n', 'NoSuchNode'), 'NoSuchNode');
  add('options', 'channelwise-unknown', charts('get-channelwise-data-distribution', model, data, '-n', 'NoSuchNode'), 'NoSuchNode');
  add('options', 'channelwise-axis', charts('get-channelwise-data-distribution', model, data, '-n', caliName, '-a', '9'), caliName);
  add('options', 'acc-error-metric', charts('plot-acc-error', model, data, '-m', 'nope'), 'nope');
  add('options', 'sensitivity-analysis-qtype', analysis('sensitivity-analysis', model, data, '-sd', `${WORK}/charts`, '-sn', convName, '-q', 'int3x'), 'int3x');
  add('options', 'bad-float', analysis('sensitivity-analysis', model, data, '-sd', `${WORK}/charts`, '-p', 'high'), "'-p' / '--pick_threshold'");
  add('options', 'runall-node-type', charts('runall', model, data, '-nt', 'tae'), 'node_type:tae is unavailable.');
  add('options', 'runall-nqn-weight', charts('runall', model, data, '-nqn', '[weight]'), "cannot set 'non_quantize_node'");
  add('options', 'missing-data-arg', ['runall', model], "Missing argument 'CALIBRATED_DATA'.");
  add('options', 'extra-arg', sens(model, data, 'extra'), 'extra');
  add('options', 'unknown-command', ['explode', model, data], "'explode'");
  add('options', 'calibrate-method', ['calibrate', floatModel, data, '--out', `${WORK}/c.onnx`, '--method', 'median'], '--method');
  add('options', 'calibrate-percentile', ['calibrate', floatModel, data, '--out', `${WORK}/c.onnx`, '--method', 'percentile', '--percentile', '0'], '--percentile');
  add('options', 'run-quant', ['run', model, data, '--quant', 'maybe', '--out', `${WORK}/run`], '--quant');

  // fix and export-config: configuration documents (docs/config-schema.md) and their options.
  const configDoc = (name, intents) => write(`configs/${name}.json`, JSON.stringify({ schema: 'ptqscope.config', version: 1, intents }));
  const keepConfig = configDoc('keep', [{ node: convName, action: 'int16' }]);
  const unknownNodeConfig = configDoc('unknown-node', [{ node: 'NoSuchNode', action: 'int16' }]);
  const badActionConfig = configDoc('bad-action', [{ node: convName, action: 'int8x' }]);
  const notJson = write('configs/not-json.json', '{"schema": "ptqscope.config", ');
  execFileSync('mkfifo', [at('configs/fifo.json')]);
  const exportOf = (config, ...rest) => ['export-config', config, '--model', model, '--format', 'horizon-yaml', '--out', `${WORK}/node_info.yaml`, ...rest];
  add('options', 'export-unknown-node', exportOf(unknownNodeConfig), 'NoSuchNode');
  add('options', 'export-bad-action', exportOf(badActionConfig), 'int8x');
  add('options', 'export-not-json', exportOf(notJson), 'not-json.json');
  add('options', 'export-config-missing', exportOf(at('configs/missing.json')), 'missing.json');
  add('options', 'export-config-fifo', exportOf(at('configs/fifo.json')), 'fifo.json');
  add('options', 'export-config-directory', exportOf(at('configs')), 'configs');
  add('options', 'export-format', ['export-config', keepConfig, '--model', model, '--format', 'yaml', '--out', `${WORK}/x`], "'yaml'");
  add('options', 'export-model-truncated', exportOf(keepConfig).map((a) => (a === model ? truncated : a)), 'truncated.onnx');
  add('options', 'export-calibrated-onnx-stdout', ['export-config', keepConfig, '--model', model, '--format', 'calibrated-onnx'], '--out');
  const fixOf = (...rest) => ['fix', model, data, '--quiet', '--workers', '1', '-s', `${WORK}/charts`, '--json', `${WORK}/fix.json`, ...rest];
  add('options', 'fix-config-fifo', fixOf('--config', at('configs/fifo.json')), 'fifo.json');
  add('options', 'fix-config-unknown-node', fixOf('--config', unknownNodeConfig), 'NoSuchNode');
  add('options', 'fix-target-metric', fixOf('--target', 'cosine>=0.99'), 'cosine');
  add('options', 'fix-max-nodes', fixOf('--max-nodes', '0'), '--max-nodes');
  add('options', 'fix-candidates-unknown', fixOf('--candidates', 'NoSuchNode'), 'NoSuchNode');
  add('options', 'fix-prefer', fixOf('--prefer', 'int3x'), 'int3x');

  // ---- output paths ----------------------------------------------------------------------------
  const aFile = write('outputs/a-file.txt', 'x');
  fs.mkdirSync(at('outputs/a-dir'), { recursive: true });
  execFileSync('mkfifo', [at('outputs/fifo.json')]);
  const outCase = (id, args, culprit) => add('output', id, args, culprit);
  outCase('json-is-dir', plain('--workers', '1', '--json', at('outputs/a-dir')), 'a-dir');
  outCase('json-below-file', plain('--workers', '1', '--json', path.join(aFile, 'r.json')), 'a-file.txt');
  outCase('json-deep-below-file', plain('--workers', '1', '--json', path.join(aFile, 'x', 'y', 'r.json')), 'a-file.txt');
  outCase('json-fifo', plain('--workers', '1', '--json', at('outputs/fifo.json')), 'fifo.json');
  outCase('json-proc', plain('--workers', '1', '--json', '/proc/version'), '/proc/version');
  outCase('json-proc-new', plain('--workers', '1', '--json', '/proc/self/ptqscope.json'), '/proc/self/ptqscope.json');
  outCase('json-trailing-slash', plain('--workers', '1', '--json', `${WORK}/new/`), `${WORK}/new/`);
  outCase('json-empty', plain('--workers', '1', '--json', ''), '--json');
  outCase('save-dir-is-file', analysis('plot-distribution', model, data, '-n', caliName, '-s', aFile), 'a-file.txt');
  outCase('save-dir-below-file', analysis('plot-acc-error', model, data, '-s', path.join(aFile, 'charts')), 'a-file.txt');
  outCase('save-dir-proc', analysis('runall', model, data, '-s', '/proc/ptqscope-out'), '/proc/ptqscope-out');
  outCase('save-dir-device', analysis('runall', model, data, '-s', '/dev/null'), '/dev/null');
  outCase('sd-is-file', analysis('sensitivity-analysis', model, data, '-sd', aFile), 'a-file.txt');
  outCase('stat-info-save-dir', analysis('get-calibration-nodes-stat-info', model, data, '-v', 'True', '-s', aFile), 'a-file.txt');
  outCase('run-out-is-file', ['run', model, data, '--quant', 'on', '--out', aFile], 'a-file.txt');
  outCase('run-out-proc', ['run', model, data, '--quant', 'on', '--out', '/proc/self/ptqscope-run'], '/proc/self/ptqscope-run');
  outCase('calibrate-out-dir', ['calibrate', floatModel, data, '--out', at('outputs/a-dir')], 'a-dir');
  outCase('calibrate-out-below-file', ['calibrate', floatModel, data, '--out', path.join(aFile, 'c.onnx')], 'a-file.txt');
  outCase('calibrate-same-file', ['calibrate', floatModel, data, '--out', `${WORK}/c.onnx`, '--qdq', `${WORK}/c.onnx`], '--qdq');
  outCase('calibrate-qdq-proc', ['calibrate', floatModel, data, '--out', `${WORK}/c.onnx`, '--qdq', '/proc/version'], '/proc/version');
  // fix: --json, --config-out (files) and -s (the path chart's folder).
  const fix = (...rest) => ['fix', model, data, '--quiet', '--workers', '1', '-s', `${WORK}/charts`, ...rest];
  outCase('fix-json-is-dir', fix('--json', at('outputs/a-dir')), 'a-dir');
  outCase('fix-json-fifo', fix('--json', at('outputs/fifo.json')), 'fifo.json');
  outCase('fix-config-out-is-dir', fix('--config-out', at('outputs/a-dir')), '--config-out');
  outCase('fix-config-out-fifo', fix('--config-out', at('outputs/fifo.json')), 'fifo.json');
  outCase('fix-config-out-below-file', fix('--config-out', path.join(aFile, 'c.json')), 'a-file.txt');
  outCase('fix-config-out-proc', fix('--config-out', '/proc/self/ptqscope.config.json'), '/proc/self/ptqscope.config.json');
  outCase('fix-config-out-trailing-slash', fix('--config-out', `${WORK}/new/`), `${WORK}/new/`);
  outCase('fix-config-out-empty', fix('--config-out', ''), '--config-out');
  outCase('fix-same-file', fix('--json', `${WORK}/r.json`, '--config-out', `${WORK}/r.json`), 'the same file as --json');
  outCase('fix-save-dir-is-file', ['fix', model, data, '--quiet', '--workers', '1', '-s', aFile], 'a-file.txt');
  outCase('fix-save-dir-device', ['fix', model, data, '--quiet', '--workers', '1', '-s', '/dev/null'], '/dev/null');
  outCase('fix-save-dir-proc', ['fix', model, data, '--quiet', '--workers', '1', '-s', '/proc/self/ptqscope-charts'], '/proc/self/ptqscope-charts');
  // export-config --out.
  const exportTo = (out, format = 'horizon-yaml') => ['export-config', keepConfig, '--model', model, '--format', format, '--out', out];
  outCase('export-out-is-dir', exportTo(at('outputs/a-dir')), 'a-dir');
  outCase('export-out-fifo', exportTo(at('outputs/fifo.json')), 'fifo.json');
  outCase('export-out-below-file', exportTo(path.join(aFile, 'node_info.yaml')), 'a-file.txt');
  outCase('export-out-proc', exportTo('/proc/self/node_info.yaml', 'ort-json'), '/proc/self/node_info.yaml');
  outCase('export-out-device', exportTo('/dev/null/model.onnx', 'calibrated-onnx'), '/dev/null');
  outCase('export-out-trailing-slash', exportTo(`${WORK}/new/`, 'calibrated-onnx'), `${WORK}/new/`);
  outCase('export-out-empty', exportTo(''), '--out');
  return cases;
}

// As a script: write the inputs and cases.json to OUT_DIR.
if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [out, model, data, floatModel] = process.argv.slice(2);
  if (!floatModel) {
    console.error('usage: generate.mjs OUT_DIR MODEL CALIBRATION_DATA FLOAT_MODEL');
    process.exit(2);
  }
  const cases = generateCatalogue(out, { model, data, floatModel });
  fs.writeFileSync(path.join(out, 'cases.json'), `${JSON.stringify(cases, null, 1)}\n`);
  console.log(`${cases.length} cases -> ${path.join(out, 'cases.json')}`);
}
