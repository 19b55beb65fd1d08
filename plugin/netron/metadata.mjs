// Operator schemas of the `horizon` domain in the format of Netron's onnx-metadata.json, so Netron
// draws HzCalibration & co. with a category colour and named inputs instead of a dark header and
// rows `0`, `1`. Netron has no API to add schemas: scripts/plugin-install.mjs merges these entries
// into the served onnx-metadata.json, and `wrapMetadataAsset` adds them at runtime when Netron
// fetches that file after the plugin started. Attribute sets follow §1.3 / the fixtures.

const OPERAND = (name, description, extra = {}) => ({ name, type: 'T', description, ...extra });

// name → [category, inputs, attributes, description]. Categories are Netron's (lower-cased they
// become the header class node-item-type-<category>).
const OPS = {
  HzCalibration: ['Quantization', [OPERAND('input', 'tensor to fake-quantize (activation or weight)')], [
    ['thresholds', 'float32[]', 'clipping threshold, one per tensor or per channel along axis'],
    ['scales', 'float32[]', 'quantization step, one per tensor or per channel'],
    ['qtype', 'string', 'int8, int16, float16, ... (what the node simulates)'],
    ['switch', 'string', 'ON: fake-quantize; OFF: pass through'],
    ['axis', 'int64', 'channel axis of per-channel thresholds'],
    ['constant', 'int64', '1 when the input is a weight (initializer)'],
    ['asymmetric', 'int64', 'asymmetric quantization flag'],
  ], 'Horizon calibration node: simulates the quantization of its input.'],
  HzPreprocess: ['Normalization', [OPERAND('input', 'image tensor'), OPERAND('weight', 'per-channel scale', { option: 'optional' }),
    OPERAND('bias', 'per-channel offset', { option: 'optional' })], [
    ['data_format', 'string', 'layout of the input'],
    ['input_type_rt', 'string', 'input colour format at runtime'],
    ['input_type_train', 'string', 'input colour format at training'],
    ['mean', 'float32[]', 'per-channel mean'],
    ['scale', 'float32[]', 'per-channel scale'],
  ], 'Horizon input normalisation (and colour conversion) inserted after a model input.'],
  HzFilter: ['Data', [OPERAND('inputs', 'tensors to filter', { list: true })], [], 'Horizon output filter; the analyses compare its inputs.'],
  HzQuantize: ['Quantization', [OPERAND('x', 'float tensor'), OPERAND('scale', 'scale'), OPERAND('zero_point', 'zero point', { option: 'optional' })], [], 'Horizon quantize (deployed models).'],
  HzDequantize: ['Quantization', [OPERAND('x', 'integer tensor'), OPERAND('scale', 'scale'), OPERAND('zero_point', 'zero point', { option: 'optional' })], [], 'Horizon dequantize (deployed models).'],
  HzSwish: ['Activation', [OPERAND('X', 'input')], [], 'x * sigmoid(x), fused by the Horizon optimizer.'],
  HzHardSwish: ['Activation', [OPERAND('X', 'input')], [], 'Hard swish, fused by the Horizon optimizer.'],
  HzMish: ['Activation', [OPERAND('X', 'input')], [], 'Mish, renamed from Mish by the Horizon toolchain.'],
  HzGelu: ['Activation', [OPERAND('X', 'input')], [], 'GELU, fused by the Horizon optimizer.'],
  HzRsqrt: ['Activation', [OPERAND('X', 'input')], [], '1 / sqrt(x).'],
  HzLut: ['Activation', [OPERAND('X', 'input')], [], 'Look-up-table activation (quantized models).'],
  HzPad: ['Tensor', [OPERAND('data', 'input'), OPERAND('pads', 'pads', { option: 'optional' })], [], 'Horizon pad.'],
  HzResize11: ['Tensor', [OPERAND('X', 'input'), OPERAND('roi', 'roi', { option: 'optional' }), OPERAND('scales', 'scales', { option: 'optional' }), OPERAND('sizes', 'sizes', { option: 'optional' })], [], 'Horizon resize (opset 11 semantics).'],
  HzChannelShuffle: ['Shape', [OPERAND('X', 'input')], [], 'Channel shuffle.'],
  HzDepthToSpace: ['Shape', [OPERAND('input', 'input')], [], 'Depth to space.'],
  HzSpaceToDepth: ['Shape', [OPERAND('input', 'input')], [], 'Space to depth.'],
};

export const HORIZON_DOMAIN = 'horizon';

// The entries, in onnx-metadata.json form. version 1: Horizon's toolchain imports opset horizon:1 and
// Netron uses an entry when the model's import of its domain is >= the entry's version.
export function horizonSchemas() {
  return Object.entries(OPS).map(([name, [category, inputs, attributes, description]]) => ({
    name,
    module: HORIZON_DOMAIN,
    version: 1,
    description,
    category,
    attributes: attributes.map(([n, type, d]) => ({ name: n, type, description: d })),
    inputs,
    outputs: [{ name: name === 'HzFilter' ? 'outputs' : 'output', type: 'T', ...(name === 'HzFilter' ? { list: true } : {}) }],
  }));
}

// Category of a horizon op (for the header class fallback), or null.
export function horizonCategory(opType) {
  return OPS[opType]?.[0] ?? null;
}

// Adds the horizon entries missing from a parsed onnx-metadata.json array. Returns the number added.
export function mergeSchemas(list) {
  if (!Array.isArray(list)) throw new Error('onnx-metadata.json: expected a JSON array of operator schemas');
  const have = new Set(list.filter((e) => e && e.module === HORIZON_DOMAIN).map((e) => e.name));
  let added = 0;
  for (const s of horizonSchemas()) {
    if (!have.has(s.name)) {
      list.push(s);
      added++;
    }
  }
  return added;
}

// Removes exactly the entries mergeSchemas adds (by name and module). Returns the number removed.
export function removeSchemas(list) {
  const ours = new Set(Object.keys(OPS));
  let removed = 0;
  for (let i = list.length - 1; i >= 0; i--) {
    const e = list[i];
    if (e && e.module === HORIZON_DOMAIN && ours.has(e.name)) {
      list.splice(i, 1);
      removed++;
    }
  }
  return removed;
}

// Runtime path: Netron reads onnx-metadata.json through its host's `asset(file, ...)` the first time
// an ONNX model opens (9.x). Wrap that instance method so the text it returns gains our entries.
// Anything unexpected (no method, not a string, not an array) passes through untouched.
export function wrapMetadataAsset(host) {
  if (!host || typeof host.asset !== 'function' || host.asset.__ptqWrapped) return false;
  const original = host.asset;
  const wrapped = async function (file, ...rest) {
    const result = await original.call(this, file, ...rest);
    if (typeof file !== 'string' || !/(^|\/)onnx-metadata\.json$/.test(file) || typeof result !== 'string') return result;
    try {
      const list = JSON.parse(result);
      return mergeSchemas(list) ? JSON.stringify(list) : result;
    } catch {
      return result;
    }
  };
  wrapped.__ptqWrapped = true;
  host.asset = wrapped;
  return true;
}
