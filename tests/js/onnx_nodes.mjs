// The main graph's nodes of an ONNX file as the file holds them, read straight from the protobuf wire
// format (an oracle independent of the core's reader): [{name, op_type, domain, inputs, outputs}].
// Field numbers from onnx/onnx.proto: ModelProto.graph 7; GraphProto.node 1; NodeProto input 1,
// output 2, name 3, op_type 4, domain 7.
import fs from 'node:fs';

const dec = new TextDecoder();

// The fields of one message: [{field, wire, value}] (value: a number for varints, bytes otherwise).
function fields(bytes) {
  const out = [];
  let i = 0;
  const varint = () => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = bytes[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  };
  while (i < bytes.length) {
    const tag = Number(varint());
    const field = tag >> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ field, wire, value: varint() });
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const n = Number(varint());
      out.push({ field, wire, value: bytes.subarray(i, i + n) });
      i += n;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const text = (fs_, field) => fs_.filter((f) => f.field === field && f.wire === 2).map((f) => dec.decode(f.value));

export function onnxNodes(file) {
  const graph = fields(new Uint8Array(fs.readFileSync(file))).find((f) => f.field === 7 && f.wire === 2);
  return fields(graph.value).filter((f) => f.field === 1 && f.wire === 2).map((f) => {
    const node = fields(f.value);
    return { name: text(node, 3)[0] ?? '', op_type: text(node, 4)[0], domain: text(node, 7)[0] ?? '', inputs: text(node, 1), outputs: text(node, 2) };
  });
}
