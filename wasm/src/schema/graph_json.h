#pragma once
// The loaded model's graph as JSON for viewers (schema "ptqscope.graph" v1, docs/graph-schema.md):
// nodes with attributes and calibration info, and every tensor with its static shape.
#include <string>

#include "ir/graph.h"
#include "quant/qoperator_rewrite.h"
#include "quant/relations.h"

namespace ptq::schema {

// `relations` must have been built from `model.graph`; `file` is what import_quantizers kept of the
// file's QOperator nodes (§1.12). Throws ptq::Error (naming the node) when a calibration node's
// attributes are malformed.
std::string graph_json(const ir::Model& model, const quant::CalibrationRelations& relations,
                       const quant::FileProvenance& file = {});

}  // namespace ptq::schema
