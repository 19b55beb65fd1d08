// The JavaScript API of the wasm build (embind): one `Session` class over exec::Executor.
// This is the only file that includes Emscripten headers; docs/wasm-api.md documents the API.
//
// Boundary rules:
//  * every C++ exception is caught here and rethrown to JS as an Error (name FormatError / PtqError /
//    RangeError / InternalError, message = what()); nothing aborts, and the session stays usable;
//  * bytes cross once: a Uint8Array is copied straight into a wasm-heap buffer with
//    TypedArray.prototype.set (no intermediate std::string / vector<val>);
//  * outputs leave zero-copy as typed views into the heap, valid until the next call on any session
//    (a later allocation may grow the heap, which detaches every view).
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>  // before em_js.h, which uses EMSCRIPTEN_KEEPALIVE
#include <emscripten/em_js.h>
#include <emscripten/val.h>

#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "api/analyze.h"
#include "bind/session_core.h"
#include "api/catalog.h"
#include "api/fix.h"
#include "analysis/output_metrics.h"
#include "core/error.h"
#include "core/model_memory.h"
#include "core/size.h"
#include "core/tensor.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "ops/conv_winograd.h"
#include "calibrate/calibrate.h"
#include "quant/calibration.h"
#include "config/config_export.h"
#include "quant/hz_to_qdq.h"
#include "quant/qoperator_rewrite.h"
#include "quant/relations.h"
#include "reader/external_data.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"
#include "schema/graph_json.h"
#include "schema/result_json.h"
#include "io/json_writer.h"

// Calls the JS function `fn` with one string. A JS exception is caught here (it must not unwind
// through the C++ analysis) and returned as a handle; 0 when the call succeeded.
EM_JS(emscripten::EM_VAL, ptq_call_with_string, (emscripten::EM_VAL fn, const char* text, size_t length), {
  try {
    Emval.toValue(fn)(UTF8ToString(text, length));
    return 0;
  } catch (e) {
    return Emval.toHandle(e);
  }
});

// Asks the JS function `fn` (no arguments) whether to cancel: 1 when it answers truthy, else 0; a JS
// exception is caught (as above), stored in *error and counts as a cancel.
EM_JS(int, ptq_ask_cancel, (emscripten::EM_VAL fn, emscripten::EM_VAL* error), {
  try {
    return Emval.toValue(fn)() ? 1 : 0;
  } catch (e) {
    HEAPU32[error >> 2] = Emval.toHandle(e);
    return 1;
  }
});

// The bytes of a calibration file {path, bytes}: `bytes` itself, or what it returns when it is a
// function (a file read when its sample is used). A JS exception is caught: its message is returned
// instead, with *failed set.
EM_JS(emscripten::EM_VAL, ptq_file_bytes, (emscripten::EM_VAL file, int* failed), {
  try {
    const bytes = Emval.toValue(file).bytes;
    return Emval.toHandle(typeof bytes === "function" ? bytes() : bytes);
  } catch (e) {
    HEAP32[failed >> 2] = 1;
    return Emval.toHandle(String(e && e.message ? e.message : e));
  }
});

// The size of this module's wasm heap in bytes (a double: 4 GiB does not fit a 32-bit size_t). The
// heap only grows, so this is also the most it has held.
EM_JS(double, ptq_heap_bytes, (), { return HEAPU8.length; });

namespace ptq::bind {
namespace {

using emscripten::val;

// A heap buffer filled from a JS Uint8Array.
using Buffer = OwnedBytes;

[[noreturn]] void throw_js_error(const char* name, const std::string& message) {
  val error = val::global("Error").new_(val(message));
  error.set("name", val(name));
  error.throw_();
}

// Runs `f`, turning any C++ exception into a JS Error. The JS throw happens outside the catch
// blocks so no C++ exception is in flight while JS unwinds the wasm frames.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  JsErrorOf error{"InternalError", ""};
  try {
    return f();
  } catch (...) {
    error = js_error_of_current_exception("out of memory: the model and data do not fit in the 4 GB wasm heap");
  }
  throw_js_error(error.name, error.message);
}

// The byte length of a JS Uint8Array, before anything is copied (0 when it is not one).
uint64_t js_byte_length(const val& bytes) {
  return bytes.instanceof(val::global("Uint8Array")) ? static_cast<uint64_t>(bytes["length"].as<double>()) : 0;
}

// The bytes of the JS files [{path, bytes}] together, before anything is copied (0 when not an array).
uint64_t js_files_length(const val& files) {
  if (!files.isArray()) return 0;
  uint64_t total = 0;
  for (size_t i = 0, n = files["length"].as<size_t>(); i < n; ++i) {
    const val f = files[i];
    if (f.typeOf().as<std::string>() == "object" && !f.isNull()) total += js_byte_length(f["bytes"]);
  }
  return total;
}

Buffer copy_from_js(const val& bytes, const std::string& what) {
  check(bytes.instanceof(val::global("Uint8Array")), what + " must be a Uint8Array");
  Buffer b = Buffer::allocate(bytes["length"].as<size_t>());
  // The view is taken after the allocation, so a heap growth cannot have detached it.
  val(emscripten::typed_memory_view(b.size, b.data.get())).call<void>("set", bytes);
  return b;
}

std::string js_string(const val& v, const std::string& what) {
  check(v.isString(), what + " must be a string");
  return v.as<std::string>();
}

// Files from JS `[{path, bytes}]` (a calibration_data/ folder, a model's external-data files), with the
// buffers the entries view.
struct JsFiles {
  std::vector<Buffer> buffers;
  std::vector<data::FileEntry> entries;
};

JsFiles js_files(const val& files, const std::string& what) {
  check(files.isArray(), what + ": expected an array of {path, bytes}");
  const size_t n = files["length"].as<size_t>();
  JsFiles out;
  out.buffers.reserve(n);  // entries point into the buffers: no reallocation
  out.entries.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string label = what + ": files[" + std::to_string(i) + "]";
    val f = files[i];
    check(f.typeOf().as<std::string>() == "object" && !f.isNull(), label + " must be an object {path, bytes}");
    data::FileEntry e;
    e.path = js_string(f["path"], label + ".path");
    out.buffers.push_back(copy_from_js(f["bytes"], label + ".bytes (" + e.path + ")"));
    e.data = out.buffers.back().data.get();
    e.size = out.buffers.back().size;
    out.entries.push_back(std::move(e));
  }
  return out;
}

// JS files {path, bytes} as the core keeps them (a model's external data).
std::vector<NamedBytes> named_files(JsFiles files) {
  std::vector<NamedBytes> named;
  for (size_t i = 0; i < files.entries.size(); ++i) named.push_back({files.entries[i].path, std::move(files.buffers[i])});
  return named;
}

// The calibration files `[{path, bytes}]` as the data set reads them: their paths, and a reader that
// copies one file's bytes into the heap while it is decoded (`bytes` a Uint8Array, or a function
// returning one). The JS objects stay alive with the reader; their bytes stay outside the wasm heap.
struct JsFileReader {
  std::vector<std::string> paths;
  data::FileReader read;
};

JsFileReader js_file_reader(const val& files, const std::string& what) {
  check(files.isArray(), what + ": expected an array of {path, bytes}");
  auto by_path = std::make_shared<std::map<std::string, val>>();
  JsFileReader out;
  for (size_t i = 0, n = files["length"].as<size_t>(); i < n; ++i) {
    const std::string label = what + ": files[" + std::to_string(i) + "]";
    val f = files[i];
    check(f.typeOf().as<std::string>() == "object" && !f.isNull(), label + " must be an object {path, bytes}");
    const std::string path = js_string(f["path"], label + ".path");
    const std::string type = f["bytes"].typeOf().as<std::string>();
    check(type == "function" || f["bytes"].instanceof(val::global("Uint8Array")),
          label + ".bytes (" + path + ") must be a Uint8Array or a function returning one");
    out.paths.push_back(path);
    by_path->emplace(path, f);  // a path listed twice is the data set's error
  }
  out.read = [by_path, what](const std::string& path, const std::function<void(const uint8_t*, size_t)>& use) {
    int failed = 0;
    const val bytes = val::take_ownership(ptq_file_bytes(by_path->at(path).as_handle(), &failed));
    if (failed) fail(path + ": could not be read: " + bytes.as<std::string>());
    const Buffer b = copy_from_js(bytes, what + ": the bytes of " + path);
    use(b.data.get(), b.size);
  };
  return out;
}

val bytes_to_js(const std::vector<uint8_t>& bytes) {
  // new Uint8Array(view) copies out of the heap.
  return val::global("Uint8Array").new_(val(emscripten::typed_memory_view(bytes.size(), bytes.data())));
}

val dims_array(const std::vector<int64_t>& dims) {
  val a = val::array();
  for (int64_t d : dims) a.call<void>("push", val(static_cast<double>(d)));
  return a;
}

val string_array(const std::vector<std::string>& items) {
  val a = val::array();
  for (const auto& s : items) a.call<void>("push", val(s));
  return a;
}

val float32_copy(const std::vector<float>& v) {
  // new Float32Array(view) copies, so the result does not depend on the heap.
  return val::global("Float32Array").new_(val(emscripten::typed_memory_view(v.size(), v.data())));
}

val value_summary(const ir::Graph& graph, int id) {
  const ir::Value& v = graph.value(id);
  val o = val::object();
  o.set("name", val(v.name));
  o.set("dtype", val(dtype_name(v.info.dtype)));
  o.set("dims", v.info.has_shape ? dims_array(v.info.dims) : val::null());
  o.set("dimParams", string_array(v.info.dim_params));
  return o;
}

val calibration_summary(const quant::CalibrationSpec& c) {
  val o = val::object();
  o.set("name", val(c.node_name));
  o.set("kind", val(c.kind_name()));
  o.set("qtype", val(c.qtype.name));
  o.set("switch", val(c.switch_on));
  o.set("axis", val(static_cast<double>(c.axis)));
  o.set("thresholds", float32_copy(c.thresholds));
  return o;
}

val model_summary(const exec::Executor& ex) {
  const ir::Model& m = ex.model();
  const ir::Graph& g = m.graph;
  val o = val::object();
  o.set("irVersion", val(static_cast<double>(m.ir_version)));
  o.set("producer", val(m.producer_name));
  val opsets = val::object();
  for (const auto& op : m.opset_imports) opsets.set(op.domain.empty() ? "ai.onnx" : op.domain, val(static_cast<double>(op.version)));
  o.set("opsets", opsets);
  val inputs = val::array();
  for (int id : g.inputs) inputs.call<void>("push", value_summary(g, id));
  o.set("inputs", inputs);
  val outputs = val::array();
  for (int id : g.outputs) outputs.call<void>("push", value_summary(g, id));
  o.set("outputs", outputs);
  o.set("nodeCount", val(static_cast<double>(g.nodes.size())));
  val calibrations = val::array();
  for (const auto& c : ex.calibrations()) calibrations.call<void>("push", calibration_summary(c));
  o.set("calibrations", calibrations);
  o.set("warnings", string_array(quant::model_warnings(m)));
  // The nodes whose op the core cannot run: the model is loaded in a limited state (graph, summary,
  // the analyses describe() marks needs_execution "activations", on weight calibration nodes).
  val unsupported = val::array();
  for (const auto& node : ex.unsupported_nodes()) {
    val u = val::object();
    u.set("node", val(node.node));
    u.set("op_type", val(node.op_type));
    u.set("domain", val(node.domain));
    unsupported.call<void>("push", u);
  }
  o.set("unsupported", unsupported);
  o.set("unsupportedMessage", val(ex.unsupported_message()));
  return o;
}

// Element-typed zero-copy view. Tensors reaching here are element-aligned (see Session::run).
template <class T>
val typed_view(const Tensor& t) {
  return val(emscripten::typed_memory_view(static_cast<size_t>(t.numel()), t.data<T>()));
}

val bigint_view(const Tensor& t, const char* array_type) {
  // embind maps int64 views only under WASM_BIGINT; build the BigInt array over the heap buffer.
  val heap = val(emscripten::typed_memory_view(t.nbytes(), t.data<uint8_t>()))["buffer"];
  return val::global(array_type).new_(heap, val(static_cast<double>(reinterpret_cast<uintptr_t>(t.raw()))),
                                      val(static_cast<double>(t.numel())));
}

val tensor_view(const Tensor& t) {
  switch (t.dtype()) {
    case DType::Float: return typed_view<float>(t);
    case DType::Double: return typed_view<double>(t);
    case DType::Int8:
    case DType::Int4: return typed_view<int8_t>(t);
    case DType::UInt8:
    case DType::UInt4:  // unpacked, one value per byte
    case DType::Bool: return typed_view<uint8_t>(t);
    case DType::Int16: return typed_view<int16_t>(t);
    case DType::UInt16:
    case DType::Float16:   // raw IEEE half bits
    case DType::BFloat16:  // raw bfloat16 bits
      return typed_view<uint16_t>(t);
    case DType::Int32: return typed_view<int32_t>(t);
    case DType::UInt32: return typed_view<uint32_t>(t);
    case DType::Int64: return bigint_view(t, "BigInt64Array");
    case DType::UInt64: return bigint_view(t, "BigUint64Array");
    default: fail("output of dtype " + dtype_name(t.dtype()) + " cannot be viewed from JavaScript");
  }
}

// A copy of `t` as {name, dtype, dims, data} (data a typed array of its own, valid after later calls).
val tensor_copy(const std::string& name, const Tensor& t) {
  val o = val::object();
  o.set("name", val(name));
  o.set("dtype", val(dtype_name(t.dtype())));
  o.set("dims", dims_array(t.shape()));
  o.set("data", tensor_view(t).call<val>("slice"));
  return o;
}

// The dtype a JS typed array holds (its constructor's name), for tensors handed in from JS.
DType typed_array_dtype(const val& array, const std::string& what) {
  static const std::map<std::string, DType> types = {
      {"Float32Array", DType::Float},  {"Float64Array", DType::Double},  {"Int8Array", DType::Int8},
      {"Uint8Array", DType::UInt8},    {"Int16Array", DType::Int16},     {"Uint16Array", DType::UInt16},
      {"Int32Array", DType::Int32},    {"Uint32Array", DType::UInt32},   {"BigInt64Array", DType::Int64},
      {"BigUint64Array", DType::UInt64}};
  const bool object = array.typeOf().as<std::string>() == "object" && !array.isNull();
  const std::string type = object ? array["constructor"]["name"].as<std::string>() : array.typeOf().as<std::string>();
  auto it = types.find(type);
  check(it != types.end(), what + " must be a typed array (Float32Array, Int32Array, ...), not " + type);
  return it->second;
}

// A JS typed array copied into a 1-D tensor of its element type.
Tensor tensor_from_js(const val& array, const std::string& what) {
  const DType dtype = typed_array_dtype(array, what);
  Tensor t(dtype, Shape{static_cast<int64_t>(array["length"].as<double>())});
  // The view is taken after the allocation, which may have grown the heap.
  val bytes = val::global("Uint8Array").new_(array["buffer"], array["byteOffset"], array["byteLength"]);
  val(emscripten::typed_memory_view(t.nbytes(), t.mutable_data<uint8_t>())).call<void>("set", bytes);
  return t;
}

// new ptq.OutputComparison(outputs: string[]): the §4 metrics of model outputs computed elsewhere
// (another engine's runs of the float and the quantized model), aggregated over samples as what_if
// aggregates ptqscope's own (analysis/output_metrics.h). add(reference, quantized) takes one
// sample's outputs (typed arrays, in `outputs` order); result() -> JSON {outputs, output_order, mean,
// samples}, what_if's keys.
class OutputComparison {
 public:
  explicit OutputComparison(val outputs) : metrics_(0) {
    guarded([&] {
      check(outputs.isArray(), "OutputComparison: outputs must be an array of output names");
      for (size_t i = 0; i < outputs["length"].as<size_t>(); ++i)
        names_.push_back(js_string(outputs[i], "OutputComparison: outputs[" + std::to_string(i) + "]"));
      metrics_ = analysis::OutputMetrics(names_.size());
    });
  }

  void add(val reference, val quantized) {
    guarded([&] {
      const size_t n = names_.size();
      for (const auto& [side, arrays] : {std::pair<const char*, const val&>{"reference", reference}, {"quantized", quantized}})
        check(arrays.isArray() && arrays["length"].as<size_t>() == n,
              std::string("OutputComparison.add: ") + side + " must be an array of " + std::to_string(n) +
                  " typed arrays, one per output");
      for (size_t t = 0; t < n; ++t) {
        const std::string what = "OutputComparison.add: output '" + names_[t] + "'";
        metrics_.add(t, tensor_from_js(reference[t], what + " (reference)"), tensor_from_js(quantized[t], what + " (quantized)"));
      }
      ++samples_;
    });
  }

  std::string result() const {
    return guarded([&] {
      io::JsonWriter w;
      w.begin_object();
      schema::write_output_metrics(w, names_, metrics_.per_output(), metrics_.mean());
      w.field("samples", static_cast<int64_t>(samples_)).end_object();
      return w.str();
    });
  }

 private:
  std::vector<std::string> names_;
  analysis::OutputMetrics metrics_;
  size_t samples_ = 0;
};

// ptq.calibrate(floatModelBytes, files, {method?, percentile?, int16?, qdq?, externalFiles?}) ->
// {model: Uint8Array, qdq: Uint8Array | null, activations, weights, samples}: calibrate/calibrate.h.
// externalFiles: the float model's external-data files, as loadModel takes them; the models written
// hold every tensor.
val calibrate(val model_bytes, val files, val options) {
  return guarded([&] {
    const Buffer model = copy_from_js(model_bytes, "calibrate: model");
    const JsFiles files_in = js_files(files, "calibrate");
    CalibrateArgs args;
    if (!options.isUndefined() && !options.isNull()) {
      check(options.typeOf().as<std::string>() == "object", "calibrate: options must be an object");
      if (val m = options["method"]; !m.isUndefined()) args.method = js_string(m, "calibrate: options.method");
      if (val p = options["percentile"]; !p.isUndefined()) {
        check(p.isNumber(), "calibrate: options.percentile must be a number");
        args.percentile = p.as<double>();
      }
      if (val q = options["int16"]; !q.isUndefined()) {
        check(q.isArray(), "calibrate: options.int16 must be an array of names");
        for (size_t i = 0, n = q["length"].as<size_t>(); i < n; ++i)
          args.int16.push_back(js_string(q[i], "calibrate: options.int16[" + std::to_string(i) + "]"));
      }
      if (val q = options["qdq"]; !q.isUndefined()) args.qdq = q.isTrue();
      if (val e = options["externalFiles"]; !e.isUndefined())
        args.external = named_files(js_files(e, "calibrate: options.externalFiles"));
    }
    const CalibrateOutput out = calibrate_model(model, files_in.entries, args);
    val o = val::object();
    o.set("model", bytes_to_js(out.model));
    o.set("qdq", out.qdq ? bytes_to_js(*out.qdq) : val::null());
    o.set("activations", val(static_cast<double>(out.activations)));
    o.set("weights", val(static_cast<double>(out.weights)));
    o.set("samples", val(static_cast<double>(out.samples)));
    return o;
  });
}

// ptq.exportFormats(): the formats of Session.exportConfig (docs/config-export.md).
val export_formats() {
  return guarded([] {
    val a = val::array();
    for (const auto& f : quant::export_formats()) a.call<void>("push", val(f.name));
    return a;
  });
}

// ptq.describe() / session.describe(): the core's description of itself (api/catalog.h), JSON text.
std::string describe() {
  return guarded([] { return api::describe_json(); });
}

// Which convolution kernels this module's sessions use (ops/conv_winograd.h): "accurate" (default: no
// Winograd), "fast" (Winograd F(2x2, 3x3)) or "fastest" (F(4x4, 3x3) too). Process-wide: one per worker.
void set_convolution_mode(const std::string& name) {
  guarded([&] { ops::set_winograd_mode(ops::parse_winograd_mode(name)); });
}

// The memory budget of this module's heap (core/size.h): the most bytes of tensors and kernel scratch
// alive at once; 0 restores the default (3 GiB). Module-wide, like the convolution mode.
void set_memory_budget(double bytes) {
  guarded([&] {
    check(bytes >= 0 && bytes <= 9007199254740992.0 && bytes == static_cast<double>(static_cast<uint64_t>(bytes)),
          "setMemoryBudget: the budget must be a whole number of bytes >= 0 (0 = the default)");
    ptq::set_memory_budget(static_cast<uint64_t>(bytes));
  });
}

// {budget, inUse, peakInUse, heapBytes}: the memory budget, the bytes counted against it now and at
// most so far, and the size of the wasm heap (which only grows: the module's peak).
val memory_usage() {
  return guarded([] {
    val out = val::object();
    out.set("budget", val(static_cast<double>(ptq::memory_budget())));
    out.set("inUse", val(static_cast<double>(ptq::memory_in_use())));
    out.set("peakInUse", val(static_cast<double>(ptq::memory_peak())));
    out.set("heapBytes", val(ptq_heap_bytes()));
    return out;
  });
}

// The external-data files a model's bytes name, [{location, path}], `path` the one of `paths` that
// location means (reader/external_data.h), or null: what the CLI reads beside the model (paths []),
// what the page keeps of the files dropped with it.
val external_data_files(val bytes, val paths) {
  return guarded([&] {
    // A model refused before any of it is copied, then once its side files' declared sizes are known:
    // the faces call this before reading those files.
    check_model_fits({js_byte_length(bytes), 0});
    const Buffer model = copy_from_js(bytes, "externalDataFiles: model bytes");
    check(paths.isArray(), "externalDataFiles: paths must be an array of strings");
    std::vector<std::string> candidates;
    for (size_t i = 0; i < paths["length"].as<size_t>(); ++i)
      candidates.push_back(js_string(paths[i], "externalDataFiles: paths[" + std::to_string(i) + "]"));
    val out = val::array();
    for (const ExternalFileMatch& match : external_data_matches(model, candidates)) {
      val entry = val::object();
      entry.set("location", match.location);
      entry.set("path", match.path ? val(*match.path) : val::null());
      out.call<void>("push", entry);
    }
    return out;
  });
}

std::string merge_results(const std::string& results_json_array) {
  return guarded([&] { return api::merge_results(results_json_array); });
}

}  // namespace

class Session {
 public:
  val load_model(val bytes) { return load_model_with_external_data(bytes, val::undefined()); }

  // loadModel(bytes, files). files: [{path, bytes}], the model's external-data files (paths relative to the model's folder, or
  // base names; reader/external_data.h says which file a location means).
  val load_model_with_external_data(val bytes, val files) {
    return guarded([&] {
      // Drop the previous model first: holding two models at once can exhaust a 4 GB heap.
      core_.release();
      // Counted against the memory budget while loaded; refused before anything is copied.
      ModelReservation reservation({js_byte_length(bytes), js_files_length(files)});
      Buffer buffer = copy_from_js(bytes, "loadModel: model bytes");
      JsFiles external = files.isUndefined() ? JsFiles{} : js_files(files, "loadModel: external-data files");
      core_.load_model(std::move(reservation), std::move(buffer), named_files(std::move(external)));
      return model_summary(core_.executor());
    });
  }

  val load_calibration_data(val files) {
    return guarded([&] {
      core_.executor();  // a model first
      JsFileReader files_in = js_file_reader(files, "loadCalibrationData");
      const data::CalibrationData& loaded = core_.load_calibration_data(std::move(files_in.paths), std::move(files_in.read));
      val o = val::object();
      o.set("sampleCount", val(static_cast<double>(loaded.sample_count())));
      o.set("sampleNames", string_array(loaded.sample_names()));
      return o;
    });
  }

  val run(int sample, val config) {
    return guarded([&] {
      const std::vector<Tensor> inputs = core_.sample_inputs(sample, "run");
      const exec::RunStats stats = core_.run(inputs, parse_config(config));
      val o = val::object();
      o.set("nodesExecuted", val(static_cast<double>(stats.nodes_executed)));
      o.set("nodesSkipped", val(static_cast<double>(stats.nodes_skipped)));
      return o;
    });
  }

  // sampleInputs(k) -> [{name, dtype, dims, data}]: the model inputs of calibration sample k as the
  // executor receives them (graph input order; copies), e.g. to feed another engine the same values.
  val sample_inputs_js(int sample) {
    return guarded([&] {
      const std::vector<Tensor> inputs = core_.sample_inputs(sample, "sampleInputs");
      const ir::Graph& g = core_.executor().graph();
      val out = val::array();
      for (size_t i = 0; i < inputs.size(); ++i)
        out.call<void>("push", tensor_copy(g.value(g.inputs[i]).name, inputs[i]));
      return out;
    });
  }

  // One forward pass with each node's wall time, {node name: ms} (benchmarks: scripts/bench-sweep's floor).
  val profile(int sample, val config) {
    return guarded([&] {
      const std::vector<Tensor> inputs = core_.sample_inputs(sample, "profile");
      const std::vector<double> ms = core_.profile(inputs, parse_config(config));
      const ir::Graph& g = core_.executor().graph();
      val o = val::object();
      for (size_t i = 0; i < ms.size(); ++i)
        if (ms[i] >= 0) o.set(g.nodes[i].name, val(ms[i]));
      return o;
    });
  }

  // Runs one analysis request (docs/wasm-api.md); `on_event` (optional) gets one JSON string per
  // finished item. An exception thrown by `on_event` stops further events and is rethrown after the
  // analysis returns (a wasm call cannot be interrupted from JS).
  // `should_cancel` (optional): a function asked between steps of the analyses that honour it (fix:
  // before every evaluation); a truthy answer stops the analysis, whose result says "cancelled": true.
  std::string analyze(const std::string& request) { return analyze_cancellable(request, val::undefined(), val::undefined()); }

  std::string analyze_with_events(const std::string& request, val on_event) {
    return analyze_cancellable(request, on_event, val::undefined());
  }

  std::string analyze_cancellable(const std::string& request, val on_event, val should_cancel) {
    std::optional<val> event_error;
    std::string result = guarded([&] {
      core_.executor();  // a model first
      const bool has_callback = !on_event.isUndefined() && !on_event.isNull();
      check(!has_callback || on_event.typeOf().as<std::string>() == "function", "analyze: onEvent must be a function");
      const bool has_cancel = !should_cancel.isUndefined() && !should_cancel.isNull();
      check(!has_cancel || should_cancel.typeOf().as<std::string>() == "function", "analyze: shouldCancel must be a function");
      api::EventFn events;
      if (has_callback)
        events = [&](const std::string& event) {
          if (event_error) return;
          if (emscripten::EM_VAL error = ptq_call_with_string(on_event.as_handle(), event.data(), event.size()))
            event_error = val::take_ownership(error);
        };
      api::CancelFn cancel;
      if (has_cancel)
        cancel = [&]() {
          if (event_error) return true;
          emscripten::EM_VAL error = nullptr;
          const bool stop = ptq_ask_cancel(should_cancel.as_handle(), &error) != 0;
          if (error) event_error = val::take_ownership(error);
          return stop;
        };
      return core_.analyze(request, events, cancel);
    });
    if (event_error) event_error->throw_();
    return result;
  }

  std::string list_items(const std::string& request) {
    return guarded([&] { return core_.list_items(request); });
  }

  // docs/config-schema.md: the document checked against the model, returned with every calibration node.
  std::string resolve_config(const std::string& config) {
    return guarded([&] { return core_.resolve_config(config); });
  }

  std::string graph_json() {
    return guarded([&] { return core_.graph_json(); });
  }

  std::string describe() const { return bind::describe(); }

  // setRelations(name): the relation rules (§1.9, describe().relation_rules) of the loaded model and of
  // every later load; the node items, calibration sets, graphJson and results follow them.
  void set_relations(const std::string& name) {
    guarded([&] { core_.set_relations(name); });
  }

  // A configuration document in a toolchain format (docs/config-export.md): text, or the model bytes
  // with the configuration written in (calibrated-onnx, a Uint8Array).
  val export_config(const std::string& config_json, const std::string& format) {
    return guarded([&] {
      const std::vector<uint8_t> out = core_.export_config(config_json, format);
      if (quant::export_is_binary(format)) return bytes_to_js(out);
      return val(std::string(out.begin(), out.end()));
    });
  }

  int output_count() const { return static_cast<int>(core_.outputs().size()); }

  val output(int index) {
    return guarded([&] {
      const Tensor& t = core_.output(index);
      val o = val::object();
      o.set("name", val(core_.output_name(index)));
      o.set("dtype", val(dtype_name(t.dtype())));
      o.set("dims", dims_array(t.shape()));
      o.set("data", tensor_view(t));
      return o;
    });
  }

  // Releases the model, the data and the outputs; the session can load another model afterwards.
  void release() { core_.release(); }

 private:
  // "stored" | "on" | "off", {on: Uint8Array|Array, qtype?: string[], round?: string}, or a
  // configuration document (an object with `schema`, docs/config-schema.md).
  exec::QuantConfig parse_config(const val& config) {
    RunConfigArgs args;
    if (config.isString()) {
      args.mode = config.as<std::string>();
      return core_.run_config(args, "run");
    }
    check(config.typeOf().as<std::string>() == "object" && !config.isNull(),
          "run: config must be 'stored', 'on', 'off', an object {on, qtype?, round?} or a configuration document");
    if (!config["schema"].isUndefined()) {
      args.document_json = val::global("JSON").call<std::string>("stringify", config);
      return core_.run_config(args, "run");
    }
    val on = config["on"];
    check(!on.isUndefined() && !on.isNull() && !on.isString() && !on["length"].isUndefined(),
          "run: config.on must be a Uint8Array or an array with one entry per calibration node");
    for (size_t i = 0, n = on["length"].as<size_t>(); i < n; ++i) {
      val e = on[i];
      args.on.push_back(e.isNumber() ? (e.as<double>() != 0.0) : e.isTrue());
    }
    val qtype = config["qtype"];
    if (!qtype.isUndefined() && !qtype.isNull()) {
      check(qtype.isArray(), "run: config.qtype must be an array of " +
                                 std::to_string(core_.executor().calibrations().size()) + " strings ('' = as stored)");
      args.qtype.emplace();
      for (size_t i = 0, n = qtype["length"].as<size_t>(); i < n; ++i)
        args.qtype->push_back(js_string(qtype[i], "run: config.qtype[" + std::to_string(i) + "]"));
    }
    val round = config["round"];
    if (!round.isUndefined() && !round.isNull()) args.round = js_string(round, "run: config.round");
    return core_.run_config(args, "run");
  }

  SessionCore core_;
};

EMSCRIPTEN_BINDINGS(ptqscope) {
  emscripten::class_<Session>("Session")
      .constructor<>()
      .function("loadModel", &Session::load_model)
      .function("loadModel", &Session::load_model_with_external_data)
      .function("loadCalibrationData", &Session::load_calibration_data)
      .function("run", &Session::run)
      .function("profile", &Session::profile)
      .function("outputCount", &Session::output_count)
      .function("output", &Session::output)
      .function("free", &Session::release)
      .function("analyze", &Session::analyze)
      .function("analyze", &Session::analyze_with_events)
      .function("analyze", &Session::analyze_cancellable)
      .function("listItems", &Session::list_items)
      .function("resolveConfig", &Session::resolve_config)
      .function("graphJson", &Session::graph_json)
      .function("describe", &Session::describe)
      .function("setRelations", &Session::set_relations)
      .function("exportConfig", &Session::export_config)
      .function("sampleInputs", &Session::sample_inputs_js);
  emscripten::class_<OutputComparison>("OutputComparison")
      .constructor<val>()
      .function("add", &OutputComparison::add)
      .function("result", &OutputComparison::result);
  emscripten::function("describe", &describe);
  emscripten::function("exportFormats", &export_formats);
  emscripten::function("mergeResults", &merge_results);
  emscripten::function("externalDataFiles", &external_data_files);
  emscripten::function("setConvolutionMode", &set_convolution_mode);
  emscripten::function("setMemoryBudget", &set_memory_budget);
  emscripten::function("memoryUsage", &memory_usage);
  emscripten::function("calibrate", &calibrate);
}

}  // namespace ptq::bind
