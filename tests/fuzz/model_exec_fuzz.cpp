// Structure-aware libFuzzer harness: mutates *valid* models (dims of declared inputs and value_info,
// attributes, initializer shapes and dtypes, graph edges, op types) through the IR and the ONNX
// writer, then loads each model and runs it through the executor (float, as stored, all quantized)
// on inputs made from its declared input shapes, plus the calibration relations.
// Anything but a ptq::Error (a crash, a sanitizer report, another exception, a hang) is a bug.
// Seeds: small valid models (scripts/fuzz-long.sh copies the fixtures and libonnx-testdata models).
// One mutation in eight is libFuzzer's byte-level one, so the wire format is mutated too.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/size.h"
#include "exec/executor.h"
#include "quant/relations.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"

using namespace ptq;

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// Inputs bigger than this are not made (the harness tests the model, not its own allocations).
constexpr int64_t kMaxInputElements = int64_t{1} << 16;

template <class T>
const T& pick(std::mt19937& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

int64_t interesting_int(std::mt19937& rng) {
  static const std::vector<int64_t> values = {0, 1, 2, 3, 4, 7, 16, 64, -1, -2, -3, 1 << 20, int64_t{1} << 31,
                                              std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                              std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()};
  return pick(rng, values);
}

float interesting_float(std::mt19937& rng) {
  static const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-30f, 1e30f, -1e30f, 255.0f,
                                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                            std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()};
  return pick(rng, values);
}

const std::vector<std::string>& interesting_strings() {
  static const std::vector<std::string> values = {"", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "nearest", "linear",
                                                  "cubic", "asymmetric", "half_pixel", "align_corners", "round_prefer_floor",
                                                  "ON", "OFF", "int8", "uint8", "int16", "uint16", "int32", "float32",
                                                  "float16", "weight", "feature", "shift", "asymq", "constant", "reflect", "edge"};
  return values;
}

const std::vector<std::string>& op_types() {
  static const std::vector<std::string> values = {
      "Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Mul", "Sub", "Div", "Relu", "Sigmoid", "Reshape", "Transpose",
      "Concat", "Split", "Slice", "Gather", "Squeeze", "Unsqueeze", "Flatten", "MaxPool", "AveragePool",
      "GlobalAveragePool", "Resize", "Pad", "ReduceMean", "ReduceSum", "Softmax", "Expand", "Tile", "Cast", "Shape",
      "ConstantOfShape", "Where", "BatchNormalization", "LayerNormalization", "Clip", "HzCalibration", "Identity",
      "Einsum", "TopK", "ArgMax", "Range", "CumSum", "ScatterND", "GatherElements", "DepthToSpace", "InstanceNormalization"};
  return values;
}

const std::vector<std::string>& attribute_names() {
  static const std::vector<std::string> values = {"axis", "axes", "perm", "kernel_shape", "pads", "strides", "dilations",
                                                  "group", "keepdims", "to", "mode", "transA", "transB", "alpha", "beta",
                                                  "epsilon", "thresholds", "scales", "qtype", "switch", "zero_point",
                                                  "split", "output_padding", "output_shape", "auto_pad", "ceil_mode",
                                                  "blocksize", "largest", "sorted", "exclusive", "reverse", "equation"};
  return values;
}

// Values of the graph that have a declared shape (inputs, outputs, value_info).
std::vector<int> shaped_values(const ir::Graph& g) {
  std::vector<int> out;
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].info.has_shape) out.push_back(static_cast<int>(i));
  return out;
}

void mutate_dims(std::vector<int64_t>& dims, std::mt19937& rng) {
  const int what = std::uniform_int_distribution<int>(0, 5)(rng);
  if (what == 0 || dims.empty()) dims.push_back(interesting_int(rng));
  else if (what == 1) dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(std::uniform_int_distribution<size_t>(0, dims.size() - 1)(rng)));
  else {
    int64_t& d = dims[std::uniform_int_distribution<size_t>(0, dims.size() - 1)(rng)];
    d = what == 2 ? d + 1 : what == 3 ? d - 1 : interesting_int(rng);
  }
}

void mutate_attribute(ir::Attribute& a, std::mt19937& rng) {
  using ir::AttrType;
  switch (a.type) {
    case AttrType::Int: a.i = interesting_int(rng); break;
    case AttrType::Float: a.f = interesting_float(rng); break;
    case AttrType::String: a.s = pick(rng, interesting_strings()); break;
    case AttrType::Ints: mutate_dims(a.ints, rng); break;
    case AttrType::Floats:
      if (a.floats.empty() || rng() % 3 == 0) a.floats.push_back(interesting_float(rng));
      else if (rng() % 2) a.floats.pop_back();
      else a.floats[rng() % a.floats.size()] = interesting_float(rng);
      break;
    case AttrType::Strings:
      if (a.strings.empty() || rng() % 2) a.strings.push_back(pick(rng, interesting_strings()));
      else a.strings.pop_back();
      break;
    default:  // tensors and graphs: retype as an int
      a.type = AttrType::Int;
      a.i = interesting_int(rng);
      break;
  }
}

ir::Attribute new_attribute(std::mt19937& rng) {
  ir::Attribute a;
  a.name = pick(rng, attribute_names());
  switch (rng() % 4) {
    case 0: a.type = ir::AttrType::Int; a.i = interesting_int(rng); break;
    case 1: a.type = ir::AttrType::Ints; for (int k = 0, n = static_cast<int>(rng() % 5); k < n; ++k) a.ints.push_back(interesting_int(rng)); break;
    case 2: a.type = ir::AttrType::Floats; for (int k = 0, n = static_cast<int>(rng() % 4); k < n; ++k) a.floats.push_back(interesting_float(rng)); break;
    default: a.type = ir::AttrType::String; a.s = pick(rng, interesting_strings()); break;
  }
  return a;
}

// A tensor of the given dtype and shape holding (a prefix of) the old bytes, zero-filled after them.
Tensor reshaped_initializer(const Tensor& old, DType dtype, const Shape& shape) {
  Tensor t = Tensor::zeros(dtype, shape);
  std::memcpy(t.mutable_raw(), old.raw(), std::min(old.nbytes(), t.nbytes()));
  return t;
}

// One structural mutation; returns false when the model offered nothing to mutate of that kind.
bool mutate_model(ir::Model& m, std::mt19937& rng) {
  ir::Graph& g = m.graph;
  if (g.nodes.empty()) return false;
  ir::Node& node = g.nodes[std::uniform_int_distribution<size_t>(0, g.nodes.size() - 1)(rng)];
  const auto random_value = [&] { return static_cast<int>(std::uniform_int_distribution<size_t>(0, g.values.size() - 1)(rng)); };
  switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
    case 0: {  // declared dims of an input / value_info
      const std::vector<int> shaped = shaped_values(g);
      if (shaped.empty()) return false;
      ir::ValueInfo& info = g.values[static_cast<size_t>(pick(rng, shaped))].info;
      mutate_dims(info.dims, rng);
      info.dim_params.resize(info.dims.size());
      return true;
    }
    case 1:  // an attribute value
      if (node.attributes.empty()) return false;
      mutate_attribute(node.attributes[rng() % node.attributes.size()], rng);
      return true;
    case 2:  // add or drop an attribute
      if (!node.attributes.empty() && rng() % 2) node.attributes.erase(node.attributes.begin() + static_cast<std::ptrdiff_t>(rng() % node.attributes.size()));
      else node.attributes.push_back(new_attribute(rng));
      return true;
    case 3: {  // an initializer's shape (and so its size)
      std::vector<int> inits;
      for (size_t i = 0; i < g.values.size(); ++i)
        if (g.values[i].initializer && g.values[i].initializer->defined()) inits.push_back(static_cast<int>(i));
      if (inits.empty()) return false;
      ir::Value& v = g.values[static_cast<size_t>(pick(rng, inits))];
      if (dtype_size(v.initializer->dtype()) == 0) return false;
      Shape shape = v.initializer->shape();
      mutate_dims(shape, rng);
      for (int64_t& d : shape) d = std::clamp<int64_t>(d, 0, 512);
      if (shape_numel(shape) > kMaxInputElements) return false;
      v.initializer = reshaped_initializer(*v.initializer, v.initializer->dtype(), shape);
      return true;
    }
    case 4: {  // an initializer's dtype
      std::vector<int> inits;
      for (size_t i = 0; i < g.values.size(); ++i)
        if (g.values[i].initializer && g.values[i].initializer->defined()) inits.push_back(static_cast<int>(i));
      if (inits.empty()) return false;
      ir::Value& v = g.values[static_cast<size_t>(pick(rng, inits))];
      if (dtype_size(v.initializer->dtype()) == 0) return false;
      static const std::vector<DType> types = {DType::Float, DType::Int64, DType::Int32, DType::Int8, DType::UInt8,
                                               DType::Float16, DType::Double, DType::Bool};
      v.initializer = reshaped_initializer(*v.initializer, pick(rng, types), v.initializer->shape());
      return true;
    }
    case 5:  // rewire an input edge (may form a cycle or reference a later value)
      if (node.inputs.empty() || g.values.empty()) return false;
      node.inputs[rng() % node.inputs.size()] = rng() % 8 == 0 ? ir::kNoValue : random_value();
      return true;
    case 6:  // add or drop an input edge
      if (!node.inputs.empty() && rng() % 2) node.inputs.pop_back();
      else if (!g.values.empty()) node.inputs.push_back(random_value());
      return true;
    case 7:  // an output onto an existing value (two producers) or a graph output moved
      if (rng() % 2 && !node.outputs.empty() && !g.values.empty()) node.outputs[rng() % node.outputs.size()] = random_value();
      else if (!g.outputs.empty() && !g.values.empty()) g.outputs[rng() % g.outputs.size()] = random_value();
      else return false;
      return true;
    case 8:  // another op type
      node.op_type = pick(rng, op_types());
      node.domain = node.op_type == "HzCalibration" ? "horizon" : "";
      return true;
    default:  // drop a node
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(&node - g.nodes.data()));
      return true;
  }
}

// An input tensor for graph input `v`: its declared dtype and dims (unknown -> 1), small values.
bool make_input(const ir::Value& v, Tensor& out) {
  const DType dtype = v.info.dtype == DType::Undefined ? DType::Float : v.info.dtype;
  if (dtype == DType::String || dtype_size(dtype) == 0) return false;
  Shape shape;
  int64_t numel = 1;
  for (int64_t d : v.info.dims) {
    const int64_t n = d < 0 ? 1 : d;
    if (n > kMaxInputElements) return false;
    numel *= n;
    if (numel > kMaxInputElements) return false;
    shape.push_back(n);
  }
  out = Tensor::zeros(dtype, shape);
  for (int64_t i = 0; i < numel; ++i) {
    const int64_t k = i % 7;
    switch (dtype) {
      case DType::Float: out.mutable_data<float>()[i] = 0.25f * static_cast<float>(k) - 0.5f; break;
      case DType::Double: out.mutable_data<double>()[i] = 0.25 * static_cast<double>(k) - 0.5; break;
      case DType::Int64: out.mutable_data<int64_t>()[i] = k % 3; break;
      case DType::Int32: out.mutable_data<int32_t>()[i] = static_cast<int32_t>(k % 3); break;
      default: out.mutable_data<uint8_t>()[i * static_cast<int64_t>(dtype_size(dtype))] = static_cast<uint8_t>(k % 2); break;
    }
  }
  return true;
}

}  // namespace

// Tensors and kernel scratch within 1 GiB (the memory budget, core/size.h): with ASan's overhead a
// run stays inside the 3 GiB rss limit of scripts/fuzz-long.sh, and a model that needs more fails
// with the budget's SizeError (a ptq::Error) before allocating, as in the wasm build.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  set_memory_budget(uint64_t{1} << 30);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937 rng(seed);
  if (rng() % 8 != 0) {
    try {
      ir::Model model = reader::read_onnx(data, size);
      for (int attempt = 0; attempt < 4; ++attempt)
        if (mutate_model(model, rng)) {
          const std::vector<uint8_t> out = reader::write_onnx(model);
          if (out.size() > max_size) break;
          std::memcpy(data, out.data(), out.size());
          return out.size();
        }
    } catch (const Error&) {
      // not a model the IR can hold: fall back to byte mutations
    } catch (const std::bad_alloc&) {
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    exec::Executor executor(reader::read_onnx(data, size));
    quant::CalibrationRelations relations(executor.graph());
    std::vector<Tensor> inputs;
    for (int id : executor.graph().inputs) {
      Tensor t;
      if (!make_input(executor.graph().value(id), t)) return 0;
      inputs.push_back(std::move(t));
    }
    for (const exec::QuantConfig& config : {executor.uniform_config(false), executor.stored_config(), executor.uniform_config(true)}) {
      try {
        executor.run(inputs, config);
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
