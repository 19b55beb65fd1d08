#pragma once
// The loaded model's graph as JSON for viewers (schema "ptqscope.graph" v1, docs/graph-schema.md):
// nodes with attributes and calibration info, and every tensor with its static shape.
#include <string>

#include "ir/graph.h"
#include "quant/relations.h"

namespace ptq::schema {

// `relations` must have been built from `model.graph`. Throws ptq::Error (naming the node) when a
// calibration node's attributes are malformed.
std::string graph_json(const ir::Model& model, const quant::CalibrationRelations& relations);

}  // namespace ptq::schema
