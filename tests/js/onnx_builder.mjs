// A minimal ONNX ModelProto encoder for tests that need hand-made models (attributes chosen to
// overflow, malformed calibration nodes): protobuf wire format only, the fields the reader uses.
// Field numbers from onnx/onnx.proto.

const enc = new TextEncoder();

function varint(value) {
  let v = BigInt.asUintN(64, BigInt(value));
  const out = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) byte |= 0x80;
    out.push(byte);
  } while (v);
  return out;
}

const concat = (parts) => {
  const flat = parts.flatMap((p) => Array.from(p));
  return Uint8Array.from(flat);
};
const key = (field, wire) => varint((field << 3) | wire);
const vField = (field, value) => [...key(field, 0), ...varint(value)];
const bField = (field, bytes) => [...key(field, 2), ...varint(bytes.length), ...bytes];
const sField = (field, text) => bField(field, Array.from(enc.encode(text)));
const f32 = (x) => Array.from(new Uint8Array(Float32Array.of(x).buffer));

// Attribute: {name, i} | {name, ints} | {name, f} | {name, floats} | {name, s} | {name, g} (a subgraph:
// {name, nodes, inputs, outputs, initializers} as buildGraph takes it).
function attribute(a) {
  const b = [...sField(1, a.name)];
  if ('i' in a) b.push(...vField(3, a.i), ...vField(20, 2));
  else if ('g' in a) b.push(...bField(6, graphFields(a.g)), ...vField(20, 5));
  else if ('f' in a) b.push(...key(2, 5), ...f32(a.f), ...vField(20, 1));
  else if ('s' in a) b.push(...sField(4, a.s), ...vField(20, 3));
  else if ('ints' in a) { for (const v of a.ints) b.push(...vField(8, v)); b.push(...vField(20, 7)); }
  else if ('floats' in a) { for (const v of a.floats) b.push(...key(7, 5), ...f32(v)); b.push(...vField(20, 6)); }
  return b;
}

function node({ name, op, inputs, outputs, attrs = [], domain = '' }) {
  const b = [];
  for (const i of inputs) b.push(...sField(1, i));
  for (const o of outputs) b.push(...sField(2, o));
  b.push(...sField(3, name), ...sField(4, op));
  for (const a of attrs) b.push(...bField(5, attribute(a)));
  if (domain) b.push(...sField(7, domain));
  return b;
}

// dims: numbers (dim_value) or strings (dim_param); no shape at all when absent. sequence: a
// sequence of such tensors (TypeProto.sequence_type, field 4, whose elem_type is the tensor's TypeProto).
function valueInfo({ name, elemType = 1, dims, sequence = false }) {
  const tensorType = [...vField(1, elemType)];
  if (dims) {
    const shape = [];
    for (const d of dims) shape.push(...bField(1, typeof d === 'string' ? sField(2, d) : vField(1, d)));
    tensorType.push(...bField(2, shape));
  }
  const type = bField(1, tensorType);
  return [...sField(1, name), ...bField(2, sequence ? bField(4, bField(1, type)) : type)];
}

// Initializer: {name, dims, floats} (float32), {name, dims, int64s}, or {name, dims, dataType, raw}
// (raw_data bytes as given: e.g. packed int4); with external: {location, offset?, length?} a float32
// tensor whose data is in that file (ONNX external data).
function tensor(t) {
  const b = [];
  for (const d of t.dims) b.push(...vField(1, d));
  if (t.external) {
    b.push(...vField(2, 1), ...sField(8, t.name));
    for (const [k, v] of Object.entries(t.external)) b.push(...bField(13, [...sField(1, k), ...sField(2, String(v))]));
    b.push(...vField(14, 1));
  } else if (t.raw) {
    b.push(...vField(2, t.dataType), ...sField(8, t.name), ...bField(9, Array.from(t.raw)));
  } else if (t.int64s) {
    b.push(...vField(2, 7), ...sField(8, t.name));
    const raw = new Uint8Array(new BigInt64Array(t.int64s.map(BigInt)).buffer);
    b.push(...bField(9, Array.from(raw)));
  } else {
    b.push(...vField(2, 1), ...sField(8, t.name));
    b.push(...bField(9, Array.from(new Uint8Array(Float32Array.from(t.floats).buffer))));
  }
  return b;
}

// GraphProto fields of {name, nodes, inputs, outputs, initializers}.
function graphFields({ name = 'test_graph', nodes, inputs, outputs, initializers = [] }) {
  const graph = [];
  for (const n of nodes) graph.push(...bField(1, node(n)));
  graph.push(...sField(2, name));
  for (const t of initializers) graph.push(...bField(5, tensor(t)));
  for (const i of inputs) graph.push(...bField(11, valueInfo(i)));
  for (const o of outputs) graph.push(...bField(12, valueInfo(o)));
  return graph;
}

// {irVersion, opsets: [[domain, version]], nodes, inputs, outputs, initializers} -> Uint8Array.
export function buildModel({ irVersion = 8, opsets = [['', 17], ['horizon', 1]], nodes, inputs, outputs, initializers = [] }) {
  const graph = graphFields({ nodes, inputs, outputs, initializers });
  const model = [...vField(1, irVersion)];
  for (const [domain, version] of opsets) model.push(...bField(8, [...(domain ? sField(1, domain) : []), ...vField(2, version)]));
  // The graph as its own part: a 10,000-node graph has too many bytes to spread into push().
  return concat([model, bField(7, graph)]);
}
