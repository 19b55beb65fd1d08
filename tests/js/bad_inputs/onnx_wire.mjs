// A small protobuf codec for the parts of ONNX the bad-input catalogue edits: a message is a list of
// fields {no, wt, value}; length-delimited fields of known sub-message types are decoded into
// messages, everything else is kept as bytes, so encode(decode(bytes)) gives the same bytes back.
const SCHEMA = {
  Model: { 7: 'Graph', 8: 'OpsetId' },
  Graph: { 1: 'Node', 5: 'Tensor', 11: 'ValueInfo', 12: 'ValueInfo', 13: 'ValueInfo' },
  Node: { 5: 'Attribute' },
  Attribute: { 5: 'Tensor' },
  Tensor: {},
  ValueInfo: { 2: 'Type' },
  Type: { 1: 'TensorType' },
  TensorType: { 2: 'Shape' },
  Shape: { 1: 'Dim' },
  Dim: {},
  OpsetId: {},
};

function readVarint(buf, pos) {
  let v = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[pos++];
    if (b === undefined) throw new Error('truncated varint');
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [v, pos];
    shift += 7n;
  }
}

function varint(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return Buffer.from(out);
}

export function decode(buf, type = 'Model') {
  const fields = [];
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const no = Number(key >> 3n);
    const wt = Number(key & 7n);
    let value;
    if (wt === 0) [value, pos] = readVarint(buf, pos);
    else if (wt === 1) { value = buf.subarray(pos, pos + 8); pos += 8; }
    else if (wt === 5) { value = buf.subarray(pos, pos + 4); pos += 4; }
    else if (wt === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const bytes = buf.subarray(pos, pos + Number(len));
      pos += Number(len);
      const sub = SCHEMA[type]?.[no];
      value = sub ? { type: sub, fields: decode(bytes, sub) } : bytes;
    } else throw new Error(`wire type ${wt}`);
    fields.push({ no, wt, value });
  }
  return fields;
}

export function encode(fields) {
  const parts = [];
  for (const { no, wt, value } of fields) {
    parts.push(varint((BigInt(no) << 3n) | BigInt(wt)));
    if (wt === 0) parts.push(varint(value));
    else if (wt === 2) {
      const bytes = value?.fields ? encode(value.fields) : Buffer.from(value);
      parts.push(varint(bytes.length), bytes);
    } else parts.push(Buffer.from(value));
  }
  return Buffer.concat(parts);
}

// Field helpers.
export const str = (no, text) => ({ no, wt: 2, value: Buffer.from(text) });
export const int = (no, v) => ({ no, wt: 0, value: BigInt(v) });
export const msg = (no, type, fields) => ({ no, wt: 2, value: { type, fields } });
export const f32 = (no, v) => {
  const b = Buffer.alloc(4);
  b.writeFloatLE(v);
  return { no, wt: 5, value: b };
};
export const text = (field) => Buffer.from(field.value).toString();
export const all = (fields, no) => fields.filter((f) => f.no === no);
export const first = (fields, no) => fields.find((f) => f.no === no);

// The graph of a decoded model and its parts.
export const graphOf = (model) => first(model, 7).value.fields;
export const nodesOf = (model) => all(graphOf(model), 1).map((f) => f.value.fields);
export const nameOf = (fields, no = 3) => (first(fields, no) ? text(first(fields, no)) : '');
export const initializersOf = (model) => all(graphOf(model), 5).map((f) => f.value.fields);

// A node's attribute fields by name (undefined when absent).
export function attribute(node, name) {
  return all(node, 5).map((f) => f.value.fields).find((a) => nameOf(a, 1) === name);
}

// A deep copy of a decoded model (buffers shared: edits replace them).
export function clone(fields) {
  return fields.map((f) => ({ ...f, value: f.value?.fields ? { type: f.value.type, fields: clone(f.value.fields) } : f.value }));
}

// A small model from scratch: {inputs: [[name, elemType, dims]], outputs: [...], nodes: [{name, op,
// inputs, outputs, domain, attributes: [fields]}], initializers: [{name, elemType, dims, raw}],
// opsets: [[domain, version]]}.
export function makeModel({ inputs, outputs, nodes, initializers = [], opsets = [['', 13]] }) {
  const valueInfo = (no, [name, elemType, dims]) => msg(no, 'ValueInfo', [
    str(1, name),
    msg(2, 'Type', [msg(1, 'TensorType', [int(1, elemType), msg(2, 'Shape', dims.map((d) => msg(1, 'Dim', [int(1, d)])))])]),
  ]);
  const graph = [
    ...nodes.map((n) => msg(1, 'Node', [
      ...n.inputs.map((i) => str(1, i)), ...n.outputs.map((o) => str(2, o)), str(3, n.name), str(4, n.op),
      ...(n.attributes ?? []).map((a) => msg(5, 'Attribute', a)), ...(n.domain ? [str(7, n.domain)] : []),
    ])),
    str(2, 'g'),
    ...initializers.map((t) => msg(5, 'Tensor', [...t.dims.map((d) => int(1, d)), int(2, t.elemType), str(8, t.name), { no: 9, wt: 2, value: Buffer.from(t.raw) }])),
    ...inputs.map((v) => valueInfo(11, v)),
    ...outputs.map((v) => valueInfo(12, v)),
  ];
  return encode([int(1, 8), ...opsets.map(([d, v]) => msg(8, 'OpsetId', [str(1, d), int(2, v)])), msg(7, 'Graph', graph)]);
}

export const ELEM = { FLOAT: 1, INT64: 7, INT32: 6, DOUBLE: 11 };
// Attribute fields: name, type (AttributeProto.AttributeType) and value.
export const attrInt = (name, v) => [str(1, name), int(20, 2), int(3, v)];
export const attrInts = (name, vs) => [str(1, name), int(20, 7), ...vs.map((v) => int(8, v))];
export const attrFloats = (name, vs) => [str(1, name), int(20, 6), ...vs.map((v) => f32(7, v))];
export const attrString = (name, s) => [str(1, name), int(20, 3), str(4, s)];

// TensorProto dims (field 1), packed or not, as BigInts; setDims writes them unpacked.
export function dimsOf(tensor) {
  const out = [];
  for (const f of all(tensor, 1)) {
    if (f.wt === 0) out.push(BigInt.asIntN(64, f.value));
    else for (let pos = 0; pos < f.value.length;) {
      const [v, next] = readVarint(f.value, pos);
      out.push(BigInt.asIntN(64, v));
      pos = next;
    }
  }
  return out;
}

export function setDims(tensor, dims) {
  const at = tensor.findIndex((f) => f.no === 1);
  const rest = tensor.filter((f) => f.no !== 1);
  tensor.splice(0, tensor.length, ...rest.slice(0, Math.max(at, 0)), ...dims.map((d) => int(1, d)), ...rest.slice(Math.max(at, 0)));
}

// Replaces an attribute's ints (field 8, packed or not).
export function setInts(attr, values) {
  attr.splice(0, attr.length, ...attr.filter((f) => f.no !== 8), ...values.map((v) => int(8, v)));
}
