// Op type -> display category, Netron's category names (the header colour is picked by
// `node-cat-<category>` in style/app.css). The core registers each op's category with its kernel
// (describe().ops): Horizon ops follow their ONNX counterparts; HzCalibration is a quantizer, not a layer.
import { opSpec } from '../../pipeline/catalog.mjs';

// '' = no category (dark grey header, like Netron's elementwise/math ops).
export const categoryOf = (opType) => opSpec(opType)?.category ?? '';

// The names of a node's inputs by position (the core's metadata, newest opset); null where inputs
// are a list (Concat's, Sum's: the viewer numbers them).
export const inputNamesOf = (opType) => (opSpec(opType)?.inputs ?? []).map((i) => (i.variadic ? null : i.name));
