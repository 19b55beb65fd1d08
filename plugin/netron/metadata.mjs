// Operator schemas of the `horizon` domain in the format of Netron's onnx-metadata.json, so Netron
// draws HzCalibration & co. with a category colour and named inputs instead of a dark header and
// rows `0`, `1`. Netron has no API to add schemas: scripts/plugin-install.mjs merges these entries
// into the served onnx-metadata.json, and `wrapMetadataAsset` adds them at runtime when Netron
// fetches that file after the plugin started. Attribute sets follow §1.3 / the fixtures.
import { opsOfDomain } from '../../web/pipeline/catalog.mjs';

// Category and input names (with optional / list flags) of each horizon op come from the core
// (describe().ops: registered with the op's kernel in wasm/src/ops); this table adds Netron's texts:
// name → [description, input descriptions by input name, attributes].
const TEXT = {
  HzCalibration: ['Horizon calibration node: simulates the quantization of its input.',
    { input: 'tensor to fake-quantize (activation or weight)' }, [
      ['thresholds', 'float32[]', 'clipping threshold, one per tensor or per channel along axis'],
      ['scales', 'float32[]', 'quantization step, one per tensor or per channel'],
      ['qtype', 'string', 'int8, int16, float16, ... (what the node simulates)'],
      ['switch', 'string', 'ON: fake-quantize; OFF: pass through'],
      ['axis', 'int64', 'channel axis of per-channel thresholds'],
      ['constant', 'int64', '1 when the input is a weight (initializer)'],
      ['asymmetric', 'int64', 'asymmetric quantization flag'],
    ]],
  HzPreprocess: ['Horizon input normalisation (and colour conversion) inserted after a model input.',
    { input: 'image tensor', weight: 'per-channel scale', bias: 'per-channel offset' }, [
      ['data_format', 'string', 'layout of the input'],
      ['input_type_rt', 'string', 'input colour format at runtime'],
      ['input_type_train', 'string', 'input colour format at training'],
      ['mean', 'float32[]', 'per-channel mean'],
      ['scale', 'float32[]', 'per-channel scale'],
    ]],
  HzFilter: ['Horizon output filter; the analyses compare its inputs.', { inputs: 'tensors to filter' }, []],
  HzQuantize: ['Horizon quantize (deployed models).', { x: 'float tensor', scale: 'scale', zero_point: 'zero point' }, []],
  HzDequantize: ['Horizon dequantize (deployed models).', { x: 'integer tensor', scale: 'scale', zero_point: 'zero point' }, []],
  HzSwish: ['x * sigmoid(x), fused by the Horizon optimizer.', { X: 'input' }, []],
  HzHardSwish: ['Hard swish, fused by the Horizon optimizer.', { X: 'input' }, []],
  HzMish: ['Mish, renamed from Mish by the Horizon toolchain.', { X: 'input' }, []],
  HzGelu: ['GELU, fused by the Horizon optimizer.', { X: 'input' }, []],
  HzRsqrt: ['1 / sqrt(x).', { X: 'input' }, []],
  HzLut: ['Look-up-table activation (quantized models).', { X: 'input' }, []],
  HzPad: ['Horizon pad.', { data: 'input', pads: 'pads' }, []],
  HzResize11: ['Horizon resize (opset 11 semantics).', { X: 'input', roi: 'roi', scales: 'scales', sizes: 'sizes' }, []],
  HzChannelShuffle: ['Channel shuffle.', { X: 'input' }, []],
  HzDepthToSpace: ['Depth to space.', { input: 'input' }, []],
  HzSpaceToDepth: ['Space to depth.', { input: 'input' }, []],
};

// Netron's category names are capitalised ('Quantization'); the core's are lower case.
const netronCategory = (category) => (category ? category[0].toUpperCase() + category.slice(1) : null);

export const HORIZON_DOMAIN = 'horizon';
const OPS = opsOfDomain(HORIZON_DOMAIN);

// The entries, in onnx-metadata.json form. version 1: Horizon's toolchain imports opset horizon:1 and
// Netron uses an entry when the model's import of its domain is >= the entry's version.
export function horizonSchemas() {
  return OPS.map((op) => {
    const [description, inputText, attributes] = TEXT[op.op_type] ?? ['', {}, []];
    const list = op.op_type === 'HzFilter';
    return {
      name: op.op_type,
      module: HORIZON_DOMAIN,
      version: 1,
      description,
      ...(op.category ? { category: netronCategory(op.category) } : {}),
      attributes: attributes.map(([n, type, d]) => ({ name: n, type, description: d })),
      inputs: op.inputs.map((i) => ({
        name: i.name, type: 'T', description: inputText[i.name] ?? '',
        ...(i.optional ? { option: 'optional' } : {}), ...(i.variadic ? { list: true } : {}),
      })),
      outputs: [{ name: list ? 'outputs' : 'output', type: 'T', ...(list ? { list: true } : {}) }],
    };
  });
}

// Category of a horizon op (for the header class fallback), or null.
export function horizonCategory(opType) {
  const op = OPS.find((o) => o.op_type === opType);
  return op ? netronCategory(op.category) : null;
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
  const ours = new Set(OPS.map((op) => op.op_type));
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
