// .npy (format 1.0/2.0/3.0) writer and reader for the CLI and the tests. Little-endian, C order.
const DESCR = {
  float32: ['<f4', Float32Array], float64: ['<f8', Float64Array], float16: ['<f2', Uint16Array],
  int8: ['|i1', Int8Array], uint8: ['|u1', Uint8Array], bool: ['|b1', Uint8Array],
  int16: ['<i2', Int16Array], uint16: ['<u2', Uint16Array], int32: ['<i4', Int32Array],
  uint32: ['<u4', Uint32Array], int64: ['<i8', BigInt64Array], uint64: ['<u8', BigUint64Array],
};
const DTYPE_OF_DESCR = Object.fromEntries(Object.entries(DESCR).map(([dtype, [descr]]) => [descr, dtype]));

// bfloat16 has no numpy dtype: widen the raw bits to float32.
function bfloat16ToFloat32(bits) {
  const u32 = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) u32[i] = bits[i] << 16;
  return new Float32Array(u32.buffer);
}

// Returns the bytes of a .npy 1.0 file for `data` (a typed array; may be a view into wasm memory,
// it is copied here).
export function encodeNpy(dtype, dims, data) {
  if (dtype === 'bfloat16') return encodeNpy('float32', dims, bfloat16ToFloat32(data));
  const entry = DESCR[dtype];
  if (!entry) throw new Error(`cannot write dtype ${dtype} as .npy`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + header.length);
  return out;
}

// Parses .npy bytes into {dtype, dims, data}; data is a fresh typed array.
export function decodeNpy(bytes) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
  if (b.length < 10 || magic.some((m, i) => b[i] !== m)) throw new Error('not a .npy file');
  const major = b[6];
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const headerLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder('latin1').decode(b.subarray(start, start + headerLen));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  const dtype = DTYPE_OF_DESCR[descr === '<b1' ? '|b1' : descr];
  if (!dtype || fortran || shapeText === undefined) throw new Error(`unsupported .npy header: ${header.trim()}`);
  const dims = shapeText.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const count = dims.reduce((a, d) => a * d, 1);
  const Ctor = DESCR[dtype][1];
  const dataStart = start + headerLen;
  // new Uint8Array(view) copies (a Node Buffer's slice() would not), giving an aligned buffer.
  const copy = new Uint8Array(b.subarray(dataStart, dataStart + count * Ctor.BYTES_PER_ELEMENT));
  if (copy.length !== count * Ctor.BYTES_PER_ELEMENT) throw new Error('truncated .npy data');
  return { dtype, dims, data: new Ctor(copy.buffer, 0, count) };
}
