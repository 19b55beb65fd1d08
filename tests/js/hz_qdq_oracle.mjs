// An oracle for calibrated (HzCalibration) models independent of the core: the model rewritten, with
// the test's own protobuf codec, into QuantizeLinear -> DequantizeLinear pairs that onnxruntime runs.
// The Horizon rule (docs/behaviour.md §1.3-1.5) for the symmetric nodes the fixtures hold: scale =
// threshold / qmax of the qtype in float32 (the stored scales when constant = 2), zero point 0 in the
// qtype, per channel along `axis` when there are several thresholds; switched OFF: Identity. 16-bit
// pairs go to onnxruntime's com.microsoft domain (ai.onnx takes int16 from opset 21). The horizon
// opset import is dropped.
import { all, attribute, clone, decode, encode, first, graphOf, int, msg, nameOf, str } from './bad_inputs/onnx_wire.mjs';

const TYPES = { int8: [3, 127], uint8: [2, 255], int16: [5, 32767], uint16: [4, 65535] }; // ONNX elem type, qmax
const ZERO_BYTES = { 3: 1, 2: 1, 5: 2, 4: 2 };

// The floats of an attribute (field 7), packed or repeated.
function floatsOf(attr) {
  const out = [];
  for (const f of all(attr, 7)) {
    const b = Buffer.from(f.value);
    if (f.wt === 5) out.push(b.readFloatLE(0));
    else for (let i = 0; i < b.length; i += 4) out.push(b.readFloatLE(i));
  }
  return out;
}
const stringOf = (node, name, fallback) => (attribute(node, name) ? nameOf(attribute(node, name), 4) : fallback);
const intOf = (node, name, fallback) => (attribute(node, name) ? Number(BigInt.asIntN(64, first(attribute(node, name), 3).value)) : fallback);

function tensor(name, elemType, dims, raw) {
  return msg(5, 'Tensor', [...dims.map((d) => int(1, d)), int(2, elemType), str(8, name), { no: 9, wt: 2, value: raw }]);
}

function node(name, op, inputs, outputs, attributes = [], domain = '') {
  return msg(1, 'Node', [
    ...inputs.map((i) => str(1, i)), ...outputs.map((o) => str(2, o)), str(3, name), str(4, op),
    ...attributes.map((a) => msg(5, 'Attribute', a)), ...(domain ? [str(7, domain)] : []),
  ]);
}

// The calibrated model `bytes` as a Q/DQ model (a Buffer).
export function calibratedToQdq(bytes) {
  const model = clone(decode(Buffer.from(bytes)));
  const graph = graphOf(model);
  let microsoft = false;
  const rewritten = [];
  const initializers = [];
  for (const f of graph) {
    if (f.no !== 1 || nameOf(f.value.fields, 4) !== 'HzCalibration') {
      rewritten.push(f);
      continue;
    }
    const n = f.value.fields;
    const name = nameOf(n, 3);
    const [input] = all(n, 1).map((x) => Buffer.from(x.value).toString());
    const [output] = all(n, 2).map((x) => Buffer.from(x.value).toString());
    if (stringOf(n, 'switch', 'ON') === 'OFF') {
      rewritten.push(node(name, 'Identity', [input], [output]));
      continue;
    }
    const qtype = stringOf(n, 'qtype', 'int8');
    if (!(qtype in TYPES)) throw new Error(`${name}: qtype ${qtype} is not in this oracle`);
    if (attribute(n, 'zero_point')) throw new Error(`${name}: asymmetric nodes are not in this oracle`);
    const [elemType, qmax] = TYPES[qtype];
    const scales = intOf(n, 'constant', 0) === 2 ? floatsOf(attribute(n, 'scales'))
      : floatsOf(attribute(n, 'thresholds')).map((t) => Math.fround(Math.fround(t) / qmax));
    const dims = scales.length > 1 ? [scales.length] : [];
    const scaleRaw = Buffer.alloc(4 * scales.length);
    scales.forEach((s, i) => scaleRaw.writeFloatLE(s, 4 * i));
    initializers.push(tensor(`${name}_oracle_scale`, 1, dims, scaleRaw));
    initializers.push(tensor(`${name}_oracle_zero_point`, elemType, dims, Buffer.alloc(ZERO_BYTES[elemType] * scales.length)));
    const axis = scales.length > 1 ? [[str(1, 'axis'), int(20, 2), int(3, intOf(n, 'axis', 1))]] : [];
    const domain = ZERO_BYTES[elemType] === 2 ? 'com.microsoft' : '';
    microsoft ||= domain !== '';
    const q = `${name}_oracle_quantized`;
    const params = [`${name}_oracle_scale`, `${name}_oracle_zero_point`];
    rewritten.push(node(`${name}_q`, 'QuantizeLinear', [input, ...params], [q], axis, domain));
    rewritten.push(node(`${name}_dq`, 'DequantizeLinear', [q, ...params], [output], axis, domain));
  }
  graph.splice(0, graph.length, ...rewritten, ...initializers);
  const opsets = model.filter((f) => f.no === 8 && nameOf(f.value.fields, 1) !== 'horizon');
  const rest = model.filter((f) => f.no !== 8);
  if (microsoft) opsets.push(msg(8, 'OpsetId', [str(1, 'com.microsoft'), int(2, 1)]));
  return encode([...rest, ...opsets]);
}
