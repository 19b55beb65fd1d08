#include "reader/external_data.h"

#include <algorithm>
#include <iterator>

#include "core/error.h"

namespace ptq::reader {
namespace {

// ONNX field numbers read here (onnx.proto).
constexpr uint32_t kModelGraph = 7;
// ModelProto's fields: varints (ir_version, model_version) and messages / strings (producer_name,
// producer_version, domain, doc_string, graph, opset_import, metadata_props, training_info, functions,
// configuration).
constexpr uint32_t kModelVarints[] = {1, 5};
constexpr uint32_t kModelMessages[] = {2, 3, 4, 6, 7, 8, 14, 20, 25, 26};
constexpr uint32_t kGraphNode = 1, kGraphInitializer = 5, kGraphSparseInitializer = 15;
constexpr uint32_t kNodeAttribute = 5;
constexpr uint32_t kAttrTensor = 5, kAttrGraph = 6, kAttrTensors = 10, kAttrGraphs = 11, kAttrSparseTensor = 22,
                   kAttrSparseTensors = 23;
constexpr uint32_t kSparseValues = 1, kSparseIndices = 2;
constexpr uint32_t kTensorName = 8, kTensorExternalData = 13;
constexpr uint32_t kEntryKey = 1, kEntryValue = 2;

bool is_message(const pb::Field& f, uint32_t number) { return f.number == number && f.wire == pb::WireType::Bytes; }

// The locations named so far, in order of first use, and the bytes the tensors declare in each.
struct Scan {
  std::vector<std::string> locations;
  std::vector<uint64_t> extents;  // per location: the largest offset + length declared
};

void add_location(Scan& out, std::string location, uint64_t extent) {
  const auto at = std::find(out.locations.begin(), out.locations.end(), location);
  if (at == out.locations.end()) {
    out.locations.push_back(std::move(location));
    out.extents.push_back(extent);
    return;
  }
  uint64_t& known = out.extents[static_cast<size_t>(at - out.locations.begin())];
  known = std::max(known, extent);
}

// A decimal offset or length; 0 when it is not one (the reader names such a value when it reads the tensor).
uint64_t declared_number(const std::string& text) {
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return 0;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

void scan_tensor(pb::Bytes tensor, Scan& out) {
  pb::Reader r(tensor, "TensorProto");
  pb::Field f;
  std::string name;
  std::vector<std::string> locations;
  uint64_t offset = 0, length = 0;
  while (r.next(f)) {
    if (is_message(f, kTensorName)) name = f.bytes.str();
    if (!is_message(f, kTensorExternalData)) continue;
    pb::Reader entry(f.bytes, "TensorProto.external_data");
    pb::Field e;
    std::string key, value;
    while (entry.next(e)) {
      if (is_message(e, kEntryKey)) key = e.bytes.str();
      else if (is_message(e, kEntryValue)) value = e.bytes.str();
    }
    if (key == "location") locations.push_back(std::move(value));
    else if (key == "offset") offset = declared_number(value);
    else if (key == "length") length = declared_number(value);
  }
  const uint64_t extent = length > UINT64_MAX - offset ? UINT64_MAX : offset + length;
  for (std::string& location : locations) {
    check_external_location(location, "tensor '" + name + "'");
    add_location(out, std::move(location), extent);
  }
}

void scan_sparse_tensor(pb::Bytes sparse, Scan& out) {
  pb::Reader r(sparse, "SparseTensorProto");
  pb::Field f;
  while (r.next(f))
    if (is_message(f, kSparseValues) || is_message(f, kSparseIndices)) scan_tensor(f.bytes, out);
}

// A node's attributes: tensors are scanned, subgraphs pushed on `graphs` (no recursion: nesting depth
// comes from the file).
void scan_node(pb::Bytes node, Scan& out, std::vector<pb::Bytes>& graphs) {
  pb::Reader r(node, "NodeProto");
  pb::Field f;
  while (r.next(f)) {
    if (!is_message(f, kNodeAttribute)) continue;
    pb::Reader attr(f.bytes, "AttributeProto");
    pb::Field a;
    while (attr.next(a)) {
      if (is_message(a, kAttrTensor) || is_message(a, kAttrTensors)) scan_tensor(a.bytes, out);
      else if (is_message(a, kAttrSparseTensor) || is_message(a, kAttrSparseTensors)) scan_sparse_tensor(a.bytes, out);
      else if (is_message(a, kAttrGraph) || is_message(a, kAttrGraphs)) graphs.push_back(a.bytes);
    }
  }
}

}  // namespace

void check_external_location(const std::string& location, const std::string& label) {
  bool ok = !location.empty() && location.front() != '/' && location.find('\\') == std::string::npos &&
            !(location.size() >= 2 && location[1] == ':') && location.find('\0') == std::string::npos;
  for (size_t start = 0; ok && start <= location.size();) {
    const size_t end = std::min(location.find('/', start), location.size());
    ok = location.compare(start, end - start, "..") != 0;
    start = end + 1;
  }
  if (!ok)
    throw FormatError(label + ": external data location '" + location +
                      "' is not a relative path below the model's folder");
}

bool starts_like_model_proto(const uint8_t* data, size_t size) {
  uint64_t tag = 0;
  for (size_t i = 0; i < std::min<size_t>(size, 10); ++i) {
    tag |= static_cast<uint64_t>(data[i] & 0x7fu) << (7 * i);
    if (data[i] & 0x80u) continue;
    const uint64_t number = tag >> 3;
    const auto wire = static_cast<pb::WireType>(tag & 7u);
    const auto in = [&](const auto& list) {
      return std::find(std::begin(list), std::end(list), number) != std::end(list);
    };
    return (wire == pb::WireType::Varint && in(kModelVarints)) || (wire == pb::WireType::Bytes && in(kModelMessages));
  }
  return false;
}

std::vector<ExternalFile> external_data_files(const uint8_t* data, size_t size) {
  Scan out;
  std::vector<pb::Bytes> graphs;
  pb::Reader model(data, size, "ModelProto");
  pb::Field f;
  try {
    while (model.next(f))
      if (is_message(f, kModelGraph)) graphs.push_back(f.bytes);
  } catch (const FormatError& e) {
    if (!starts_like_model_proto(data, size)) throw FormatError(std::string("not an ONNX model (") + e.what() + ")");
    throw FormatError(std::string("not a valid ONNX model (damaged or truncated): ") + e.what());
  }
  while (!graphs.empty()) {
    const pb::Bytes graph = graphs.back();
    graphs.pop_back();
    pb::Reader r(graph, "GraphProto");
    while (r.next(f)) {
      if (is_message(f, kGraphInitializer)) scan_tensor(f.bytes, out);
      else if (is_message(f, kGraphSparseInitializer)) scan_sparse_tensor(f.bytes, out);
      else if (is_message(f, kGraphNode)) scan_node(f.bytes, out, graphs);
    }
  }
  std::vector<ExternalFile> files;
  for (size_t i = 0; i < out.locations.size(); ++i) files.push_back({std::move(out.locations[i]), out.extents[i]});
  return files;
}

uint64_t external_data_bytes(const std::vector<ExternalFile>& files) {
  uint64_t total = 0;
  for (const ExternalFile& f : files)
    total = f.declared_bytes > UINT64_MAX - total ? UINT64_MAX : total + f.declared_bytes;
  return total;
}

std::optional<size_t> find_external_file(const std::vector<std::string>& paths, const std::string& location) {
  for (size_t i = 0; i < paths.size(); ++i)
    if (paths[i] == location) return i;
  const auto base_name = [](const std::string& path) { return path.substr(path.find_last_of('/') + 1); };
  const std::string wanted = base_name(location);
  std::optional<size_t> found;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (base_name(paths[i]) != wanted) continue;
    if (found) return std::nullopt;  // two candidates: which one is meant is unknown
    found = i;
  }
  return found;
}

}  // namespace ptq::reader
