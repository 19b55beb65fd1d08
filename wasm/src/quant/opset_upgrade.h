#pragma once
// Raises a model's default-domain (ai.onnx) opset, so Q/DQ nodes that need a newer opset (per-axis:
// 13, 16-bit types: 21) can be added to a model exported at an older one. One opset applies to the
// whole domain, so every existing node is moved along; nodes whose inputs or meaning changed in
// between are rewritten to keep their behaviour:
// - Squeeze / Unsqueeze / ReduceSum (13), the other Reduce* (18): `axes` attribute -> int64 input;
// - Split (13): `split` attribute -> input; Split (18): `num_outputs` when no split is given;
// - Softmax / LogSoftmax / Hardmax (13): the old "coerce to 2-D at axis" semantics, kept as
//   Flatten -> op(axis=-1) -> Reshape(Shape(x)) unless the axis is known to be the last one;
// - Dropout (12): the inference-irrelevant `ratio` attribute is dropped;
// - RoiAlign (16): coordinate_transformation_mode = "output_half_pixel" (the old behaviour).
// Unrepresentable changes (Resize "tf_half_pixel_for_nn", GroupNormalization before 21, source
// opsets below 11, affected ops inside subgraphs) are errors. The IR version is raised to the one
// the new opset requires.
#include <cstdint>

#include "ir/graph.h"

namespace ptq::quant {

void upgrade_default_opset(ir::Model& model, int64_t target);

// The smallest IR version that may declare `opset` of ai.onnx.
int64_t min_ir_version_for_opset(int64_t opset);

}  // namespace ptq::quant
