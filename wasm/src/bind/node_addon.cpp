// The native engine: the core as a Node-API addon (ptqscope.node), exposing what the wasm module's
// embind glue exposes (bind/api.cpp, docs/wasm-api.md) so that web/pipeline/worker_core.mjs and the
// CLI run it unchanged, in the main thread and in worker_threads (the addon is context-aware: each
// thread that loads it gets its own module state, memory budget and convolution mode, as each wasm
// instance has). Why an addon and not a worker process: docs/architecture.md, "Engines".
// Node-API is ABI-stable: one build runs on every Node release of the same platform that supports
// NAPI_VERSION 8 (Node 12.22 and later).
//
// Boundary rules (as bind/api.cpp's):
//  * every C++ exception becomes a JS Error (name FormatError / PtqError / RangeError / InternalError);
//    nothing aborts and the session stays usable; a JS exception thrown by a callback the core called
//    (a file's bytes, an event, shouldCancel) is handled as in the wasm module;
//  * bytes are copied once each way; outputs are copies (valid after later calls, unlike the wasm
//    module's views).
#define NAPI_VERSION 8
#include <node_api.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "api/catalog.h"
#include "bind/session_core.h"
#include "config/config_export.h"
#include "core/error.h"
#include "core/model_memory.h"
#include "core/size.h"
#include "ops/conv_winograd.h"
#include "ops/gemm_kernel.h"
#include "quant/calibration.h"

namespace ptq::bind {
namespace {

// A JavaScript exception is pending in the environment: unwinds to the entry point, which returns
// with it still pending (Node throws it there).
struct JsPending {};

void check_napi(napi_env env, napi_status status) {
  if (status == napi_ok) return;
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending || status == napi_pending_exception) throw JsPending{};
  const napi_extended_error_info* info = nullptr;
  napi_get_last_error_info(env, &info);
  throw std::runtime_error(std::string("Node-API call failed: ") +
                           (info && info->error_message ? info->error_message : "unknown error"));
}

// The values of one call: small constructors and readers over napi_value.
class Js {
 public:
  explicit Js(napi_env env) : env_(env) {}
  napi_env env() const { return env_; }
  void ok(napi_status s) const { check_napi(env_, s); }

  napi_value undefined() const { return get(napi_get_undefined); }
  napi_value null() const { return get(napi_get_null); }
  napi_value boolean(bool b) const {
    napi_value v;
    ok(napi_get_boolean(env_, b, &v));
    return v;
  }
  napi_value number(double d) const {
    napi_value v;
    ok(napi_create_double(env_, d, &v));
    return v;
  }
  napi_value string(const std::string& s) const {
    napi_value v;
    ok(napi_create_string_utf8(env_, s.data(), s.size(), &v));
    return v;
  }
  napi_value object() const {
    napi_value v;
    ok(napi_create_object(env_, &v));
    return v;
  }
  napi_value array() const {
    napi_value v;
    ok(napi_create_array(env_, &v));
    return v;
  }
  void set(napi_value o, const char* name, napi_value v) const { ok(napi_set_named_property(env_, o, name, v)); }
  void push(napi_value a, napi_value v) const { ok(napi_set_element(env_, a, length(a), v)); }
  napi_value strings(const std::vector<std::string>& items) const {
    napi_value a = array();
    for (const auto& s : items) push(a, string(s));
    return a;
  }
  napi_value numbers(const std::vector<int64_t>& items) const {
    napi_value a = array();
    for (int64_t x : items) push(a, number(static_cast<double>(x)));
    return a;
  }
  // A new typed array of `type` holding a copy of `bytes` bytes at `data`.
  napi_value typed_copy(napi_typedarray_type type, size_t element_bytes, const void* data, size_t bytes) const {
    void* dst = nullptr;
    napi_value buffer, out;
    ok(napi_create_arraybuffer(env_, bytes, &dst, &buffer));
    if (bytes) std::memcpy(dst, data, bytes);
    ok(napi_create_typedarray(env_, type, bytes / element_bytes, buffer, 0, &out));
    return out;
  }
  napi_value bytes(const std::vector<uint8_t>& b) const { return typed_copy(napi_uint8_array, 1, b.data(), b.size()); }

  napi_valuetype type_of(napi_value v) const {
    napi_valuetype t;
    ok(napi_typeof(env_, v, &t));
    return t;
  }
  bool is_object(napi_value v) const { return type_of(v) == napi_object; }
  bool is_absent(napi_value v) const {
    const napi_valuetype t = type_of(v);
    return t == napi_undefined || t == napi_null;
  }
  bool is_array(napi_value v) const {
    bool b = false;
    ok(napi_is_array(env_, v, &b));
    return b;
  }
  napi_value get(napi_value o, const char* name) const {
    napi_value v;
    ok(napi_get_named_property(env_, o, name, &v));
    return v;
  }
  napi_value at(napi_value a, uint32_t i) const {
    napi_value v;
    ok(napi_get_element(env_, a, i, &v));
    return v;
  }
  uint32_t length(napi_value a) const {
    uint32_t n = 0;
    ok(napi_get_array_length(env_, a, &n));
    return n;
  }
  double to_number(napi_value v, const std::string& what) const {
    check(type_of(v) == napi_number, what + " must be a number");
    double d;
    ok(napi_get_value_double(env_, v, &d));
    return d;
  }
  bool truthy(napi_value v) const {
    napi_value b;
    bool out;
    ok(napi_coerce_to_bool(env_, v, &b));
    ok(napi_get_value_bool(env_, b, &out));
    return out;
  }
  std::string to_string(napi_value v, const std::string& what) const {
    check(type_of(v) == napi_string, what + " must be a string");
    size_t n = 0;
    ok(napi_get_value_string_utf8(env_, v, nullptr, 0, &n));
    std::string s(n, '\0');
    ok(napi_get_value_string_utf8(env_, v, s.data(), n + 1, &n));
    return s;
  }
  // The bytes of a Uint8Array, or nullopt when `v` is not one.
  std::optional<std::pair<const uint8_t*, size_t>> uint8_view(napi_value v) const {
    bool typed = false;
    ok(napi_is_typedarray(env_, v, &typed));
    if (!typed) return std::nullopt;
    napi_typedarray_type type;
    size_t n = 0;
    void* data = nullptr;
    ok(napi_get_typedarray_info(env_, v, &type, &n, &data, nullptr, nullptr));
    if (type != napi_uint8_array) return std::nullopt;
    return std::make_pair(static_cast<const uint8_t*>(data), n);
  }
  OwnedBytes copy_bytes(napi_value v, const std::string& what) const {
    const auto view = uint8_view(v);
    check(view.has_value(), what + " must be a Uint8Array");
    OwnedBytes b = OwnedBytes::allocate(view->second);
    if (view->second) std::memcpy(b.data.get(), view->first, view->second);
    return b;
  }
  // The message of a thrown JS value (its `message`, else its string form).
  std::string message_of(napi_value error) const {
    napi_value m = error;
    if (is_object(error)) m = get(error, "message");
    napi_value s;
    ok(napi_coerce_to_string(env_, m, &s));
    return to_string(s, "message");
  }
  // Takes the pending exception, if any.
  std::optional<napi_value> take_exception() const {
    bool pending = false;
    ok(napi_is_exception_pending(env_, &pending));
    if (!pending) return std::nullopt;
    napi_value e;
    ok(napi_get_and_clear_last_exception(env_, &e));
    return e;
  }
  // Calls fn(args...); a JS exception it throws is returned instead of thrown.
  napi_value call(napi_value fn, std::vector<napi_value> args, std::optional<napi_value>& thrown) const {
    napi_value result = nullptr;
    const napi_status s = napi_call_function(env_, undefined(), fn, args.size(), args.data(), &result);
    if (s == napi_ok) return result;
    thrown = take_exception();
    if (!thrown) ok(s);
    return nullptr;
  }

 private:
  napi_value get(napi_status (*f)(napi_env, napi_value*)) const {
    napi_value v;
    ok(f(env_, &v));
    return v;
  }
  napi_env env_;
};

// Throws a JS Error named `name` (the wasm module's error kinds).
void throw_js_error(napi_env env, const char* name, const std::string& message) {
  napi_value msg, error, name_value;
  if (napi_create_string_utf8(env, message.data(), message.size(), &msg) != napi_ok ||
      napi_create_error(env, nullptr, msg, &error) != napi_ok ||
      napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &name_value) != napi_ok)
    return;
  napi_set_named_property(env, error, "name", name_value);
  napi_throw(env, error);
}

// Runs `f`, turning a C++ exception into a JS Error; returns nullptr (undefined) after throwing.
template <class F>
napi_value guarded(napi_env env, F&& f) {
  try {
    return f();
  } catch (const JsPending&) {
    return nullptr;
  } catch (...) {
    const JsErrorOf error = js_error_of_current_exception("out of memory: the model and data do not fit in memory");
    throw_js_error(env, error.name, error.message);
    return nullptr;
  }
}

// The arguments of a call (missing ones are undefined) and `this`.
struct Args {
  std::vector<napi_value> argv;
  napi_value self = nullptr;
  size_t count = 0;  // how many the caller passed
};
Args args_of(napi_env env, napi_callback_info info, size_t max) {
  Args a;
  a.argv.resize(max);
  a.count = max;
  check_napi(env, napi_get_cb_info(env, info, &a.count, a.argv.data(), &a.self, nullptr));
  napi_value undefined;
  check_napi(env, napi_get_undefined(env, &undefined));
  for (size_t i = a.count; i < max; ++i) a.argv[i] = undefined;
  return a;
}

// The byte length of a JS Uint8Array before anything is copied (0 when it is not one), and of the
// `bytes` of the JS files [{path, bytes}] together.
uint64_t byte_length(const Js& js, napi_value v) {
  const auto view = js.uint8_view(v);
  return view ? view->second : 0;
}
uint64_t files_length(const Js& js, napi_value files) {
  if (js.is_absent(files) || !js.is_array(files)) return 0;
  uint64_t total = 0;
  for (uint32_t i = 0, n = js.length(files); i < n; ++i) {
    napi_value f = js.at(files, i);
    if (js.is_object(f)) total += byte_length(js, js.get(f, "bytes"));
  }
  return total;
}

// Files from JS [{path, bytes}] with their bytes copied (a model's external data, calibrate's folder).
std::vector<NamedBytes> js_files(const Js& js, napi_value files, const std::string& what) {
  check(js.is_array(files), what + ": expected an array of {path, bytes}");
  std::vector<NamedBytes> out;
  for (uint32_t i = 0, n = js.length(files); i < n; ++i) {
    const std::string label = what + ": files[" + std::to_string(i) + "]";
    napi_value f = js.at(files, i);
    check(js.is_object(f), label + " must be an object {path, bytes}");
    NamedBytes e;
    e.path = js.to_string(js.get(f, "path"), label + ".path");
    e.bytes = js.copy_bytes(js.get(f, "bytes"), label + ".bytes (" + e.path + ")");
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<data::FileEntry> entries_of(const std::vector<NamedBytes>& files) {
  std::vector<data::FileEntry> out;
  for (const NamedBytes& f : files) out.push_back({f.path, f.bytes.data.get(), f.bytes.size});
  return out;
}

// References to JS values kept beyond one call (the calibration files a data set reads later).
class References {
 public:
  References(napi_env env) : env_(env) {}
  ~References() {
    for (auto& [key, ref] : refs_) napi_delete_reference(env_, ref);
  }
  void keep(const std::string& key, napi_value v) {
    napi_ref ref;
    check_napi(env_, napi_create_reference(env_, v, 1, &ref));
    refs_.emplace(key, ref);
  }
  napi_value get(const std::string& key) const {
    napi_value v;
    check_napi(env_, napi_get_reference_value(env_, refs_.at(key), &v));
    return v;
  }

 private:
  napi_env env_;
  std::map<std::string, napi_ref> refs_;
};

// The calibration files [{path, bytes}] as the data set reads them: `bytes` a Uint8Array or a function
// returning one (read whenever its sample is used, on this thread, during a later call).
std::pair<std::vector<std::string>, data::FileReader> js_file_reader(const Js& js, napi_value files,
                                                                     const std::string& what) {
  check(js.is_array(files), what + ": expected an array of {path, bytes}");
  auto refs = std::make_shared<References>(js.env());
  std::vector<std::string> paths;
  for (uint32_t i = 0, n = js.length(files); i < n; ++i) {
    const std::string label = what + ": files[" + std::to_string(i) + "]";
    napi_value f = js.at(files, i);
    check(js.is_object(f), label + " must be an object {path, bytes}");
    const std::string path = js.to_string(js.get(f, "path"), label + ".path");
    napi_value bytes = js.get(f, "bytes");
    check(js.type_of(bytes) == napi_function || js.uint8_view(bytes).has_value(),
          label + ".bytes (" + path + ") must be a Uint8Array or a function returning one");
    paths.push_back(path);
    refs->keep(path, f);  // a path listed twice is the data set's error
  }
  napi_env env = js.env();
  data::FileReader read = [refs, what, env](const std::string& path,
                                            const std::function<void(const uint8_t*, size_t)>& use) {
    const Js js(env);
    napi_value bytes = js.get(refs->get(path), "bytes");
    if (js.type_of(bytes) == napi_function) {
      std::optional<napi_value> thrown;
      bytes = js.call(bytes, {}, thrown);
      if (thrown) fail(path + ": could not be read: " + js.message_of(*thrown));
    }
    const auto view = js.uint8_view(bytes);
    check(view.has_value(), what + ": the bytes of " + path + " must be a Uint8Array");
    // Copied, as the wasm module copies into its heap: the view is not used after the call returns.
    const OwnedBytes copy = js.copy_bytes(bytes, what + ": the bytes of " + path);
    use(copy.data.get(), copy.size);
  };
  return {std::move(paths), std::move(read)};
}

napi_value value_summary(const Js& js, const ir::Graph& graph, int id) {
  const ir::Value& v = graph.value(id);
  napi_value o = js.object();
  js.set(o, "name", js.string(v.name));
  js.set(o, "dtype", js.string(dtype_name(v.info.dtype)));
  js.set(o, "dims", v.info.has_shape ? js.numbers(v.info.dims) : js.null());
  js.set(o, "dimParams", js.strings(v.info.dim_params));
  return o;
}

napi_value calibration_summary(const Js& js, const quant::CalibrationSpec& c) {
  napi_value o = js.object();
  js.set(o, "name", js.string(c.node_name));
  js.set(o, "kind", js.string(c.kind_name()));
  js.set(o, "qtype", js.string(c.qtype.name));
  js.set(o, "switch", js.boolean(c.switch_on));
  js.set(o, "axis", js.number(static_cast<double>(c.axis)));
  js.set(o, "thresholds", js.typed_copy(napi_float32_array, 4, c.thresholds.data(), c.thresholds.size() * 4));
  return o;
}

napi_value model_summary(const Js& js, const exec::Executor& ex) {
  const ir::Model& m = ex.model();
  const ir::Graph& g = m.graph;
  napi_value o = js.object();
  js.set(o, "irVersion", js.number(static_cast<double>(m.ir_version)));
  js.set(o, "producer", js.string(m.producer_name));
  napi_value opsets = js.object();
  for (const auto& op : m.opset_imports)
    js.set(opsets, op.domain.empty() ? "ai.onnx" : op.domain.c_str(), js.number(static_cast<double>(op.version)));
  js.set(o, "opsets", opsets);
  napi_value inputs = js.array(), outputs = js.array(), calibrations = js.array(), unsupported = js.array();
  for (int id : g.inputs) js.push(inputs, value_summary(js, g, id));
  for (int id : g.outputs) js.push(outputs, value_summary(js, g, id));
  for (const auto& c : ex.calibrations()) js.push(calibrations, calibration_summary(js, c));
  for (const auto& node : ex.unsupported_nodes()) {
    napi_value u = js.object();
    js.set(u, "node", js.string(node.node));
    js.set(u, "op_type", js.string(node.op_type));
    js.set(u, "domain", js.string(node.domain));
    js.push(unsupported, u);
  }
  js.set(o, "inputs", inputs);
  js.set(o, "outputs", outputs);
  js.set(o, "nodeCount", js.number(static_cast<double>(g.nodes.size())));
  js.set(o, "calibrations", calibrations);
  js.set(o, "warnings", js.strings(quant::model_warnings(m)));
  js.set(o, "unsupported", unsupported);
  js.set(o, "unsupportedMessage", js.string(ex.unsupported_message()));
  return o;
}

// A copy of a tensor's data as the typed array the wasm module's view has.
napi_value tensor_data(const Js& js, const Tensor& t) {
  const auto copy = [&](napi_typedarray_type type, size_t size) {
    return js.typed_copy(type, size, t.raw(), t.nbytes());
  };
  switch (t.dtype()) {
    case DType::Float: return copy(napi_float32_array, 4);
    case DType::Double: return copy(napi_float64_array, 8);
    case DType::Int8:
    case DType::Int4: return copy(napi_int8_array, 1);
    case DType::UInt8:
    case DType::UInt4:  // unpacked, one value per byte
    case DType::Bool: return copy(napi_uint8_array, 1);
    case DType::Int16: return copy(napi_int16_array, 2);
    case DType::UInt16:
    case DType::Float16:   // raw IEEE half bits
    case DType::BFloat16:  // raw bfloat16 bits
      return copy(napi_uint16_array, 2);
    case DType::Int32: return copy(napi_int32_array, 4);
    case DType::UInt32: return copy(napi_uint32_array, 4);
    case DType::Int64: return copy(napi_bigint64_array, 8);
    case DType::UInt64: return copy(napi_biguint64_array, 8);
    default: fail("output of dtype " + dtype_name(t.dtype()) + " cannot be viewed from JavaScript");
  }
}

// ---- Session --------------------------------------------------------------------------------------

SessionCore& core_of(napi_env env, napi_value self) {
  void* p = nullptr;
  check_napi(env, napi_unwrap(env, self, &p));
  return *static_cast<SessionCore*>(p);
}

napi_value session_new(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
    Args a = args_of(env, info, 0);
    auto* core = new SessionCore();
    const napi_status s = napi_wrap(
        env, a.self, core, [](napi_env, void* data, void*) { delete static_cast<SessionCore*>(data); }, nullptr,
        nullptr);
    if (s != napi_ok) delete core;
    check_napi(env, s);
    return a.self;
  });
}

// One Session method: `body(js, core, args)` -> napi_value, with the call's errors turned into JS errors.
template <size_t N, class F>
napi_value method(napi_env env, napi_callback_info info, F&& body) {
  return guarded(env, [&] {
    Args a = args_of(env, info, N);
    const Js js(env);
    return body(js, core_of(env, a.self), a);
  });
}

napi_value session_load_model(napi_env env, napi_callback_info info) {
  return method<2>(env, info, [](const Js& js, SessionCore& core, const Args& a) {
    // Drop the previous model first, then count the new one before anything is copied.
    core.release();
    ModelReservation reservation({byte_length(js, a.argv[0]), files_length(js, a.argv[1])});
    OwnedBytes model = js.copy_bytes(a.argv[0], "loadModel: model bytes");
    std::vector<NamedBytes> external;
    if (js.type_of(a.argv[1]) != napi_undefined) external = js_files(js, a.argv[1], "loadModel: external-data files");
    core.load_model(std::move(reservation), std::move(model), std::move(external));
    return model_summary(js, core.executor());
  });
}

napi_value session_load_calibration_data(napi_env env, napi_callback_info info) {
  return method<1>(env, info, [](const Js& js, SessionCore& core, const Args& a) {
    core.executor();  // a model first
    auto [paths, read] = js_file_reader(js, a.argv[0], "loadCalibrationData");
    const data::CalibrationData& loaded = core.load_calibration_data(std::move(paths), std::move(read));
    napi_value o = js.object();
    js.set(o, "sampleCount", js.number(static_cast<double>(loaded.sample_count())));
    js.set(o, "sampleNames", js.strings(loaded.sample_names()));
    return o;
  });
}

// "stored" | "on" | "off", {on: Uint8Array|Array, qtype?: string[], round?: string}, or a
// configuration document (an object with `schema`, docs/config-schema.md).
exec::QuantConfig run_config(const Js& js, SessionCore& core, napi_value config) {
  RunConfigArgs args;
  if (js.type_of(config) == napi_string) {
    args.mode = js.to_string(config, "run: config");
    return core.run_config(args, "run");
  }
  check(js.is_object(config),
        "run: config must be 'stored', 'on', 'off', an object {on, qtype?, round?} or a configuration document");
  if (js.type_of(js.get(config, "schema")) != napi_undefined) {
    napi_value global;
    js.ok(napi_get_global(js.env(), &global));
    std::optional<napi_value> thrown;
    napi_value text = js.call(js.get(js.get(global, "JSON"), "stringify"), {config}, thrown);
    if (thrown) {
      js.ok(napi_throw(js.env(), *thrown));
      throw JsPending{};
    }
    args.document_json = js.to_string(text, "run: config");
    return core.run_config(args, "run");
  }
  napi_value on = js.get(config, "on");
  const bool indexable =
      !js.is_absent(on) && js.type_of(on) != napi_string && js.type_of(js.get(on, "length")) != napi_undefined;
  check(indexable, "run: config.on must be a Uint8Array or an array with one entry per calibration node");
  const uint32_t n_on = static_cast<uint32_t>(js.to_number(js.get(on, "length"), "run: config.on.length"));
  for (uint32_t i = 0; i < n_on; ++i) {
    napi_value e = js.at(on, i);
    args.on.push_back(js.type_of(e) == napi_number ? js.to_number(e, "run: config.on[i]") != 0.0
                                                   : js.type_of(e) == napi_boolean && js.truthy(e));
  }
  napi_value qtype = js.get(config, "qtype");
  if (!js.is_absent(qtype)) {
    check(js.is_array(qtype), "run: config.qtype must be an array of " +
                                  std::to_string(core.executor().calibrations().size()) + " strings ('' = as stored)");
    args.qtype.emplace();
    for (uint32_t i = 0, n = js.length(qtype); i < n; ++i)
      args.qtype->push_back(js.to_string(js.at(qtype, i), "run: config.qtype[" + std::to_string(i) + "]"));
  }
  napi_value round = js.get(config, "round");
  if (!js.is_absent(round)) args.round = js.to_string(round, "run: config.round");
  return core.run_config(args, "run");
}

int sample_index(const Js& js, napi_value v, const char* what) {
  return static_cast<int>(js.to_number(v, std::string(what) + ": sample"));
}

napi_value session_run(napi_env env, napi_callback_info info) {
  return method<2>(env, info, [](const Js& js, SessionCore& core, const Args& a) {
    const std::vector<Tensor> inputs = core.sample_inputs(sample_index(js, a.argv[0], "run"), "run");
    const exec::RunStats stats = core.run(inputs, run_config(js, core, a.argv[1]));
    napi_value o = js.object();
    js.set(o, "nodesExecuted", js.number(static_cast<double>(stats.nodes_executed)));
    js.set(o, "nodesSkipped", js.number(static_cast<double>(stats.nodes_skipped)));
    return o;
  });
}

napi_value session_profile(napi_env env, napi_callback_info info) {
  return method<2>(env, info, [](const Js& js, SessionCore& core, const Args& a) {
    const std::vector<Tensor> inputs = core.sample_inputs(sample_index(js, a.argv[0], "profile"), "profile");
    const std::vector<double> ms = core.profile(inputs, run_config(js, core, a.argv[1]));
    const ir::Graph& g = core.executor().graph();
    napi_value o = js.object();
    for (size_t i = 0; i < ms.size(); ++i)
      if (ms[i] >= 0) js.set(o, g.nodes[i].name.c_str(), js.number(ms[i]));
    return o;
  });
}

// analyze(request, onEvent?, shouldCancel?): as the wasm module's; an exception thrown by a callback
// stops further events (and counts as a cancel) and is rethrown once the analysis returns.
napi_value session_analyze(napi_env env, napi_callback_info info) {
  std::optional<napi_value> callback_error;
  napi_value result = method<3>(env, info, [&](const Js& js, SessionCore& core, const Args& a) {
    const std::string request = js.to_string(a.argv[0], "analyze: request");
    core.executor();  // a model first
    napi_value on_event = a.argv[1], should_cancel = a.argv[2];
    const bool has_callback = !js.is_absent(on_event);
    check(!has_callback || js.type_of(on_event) == napi_function, "analyze: onEvent must be a function");
    const bool has_cancel = !js.is_absent(should_cancel);
    check(!has_cancel || js.type_of(should_cancel) == napi_function, "analyze: shouldCancel must be a function");
    api::EventFn events;
    if (has_callback)
      events = [&](const std::string& event) {
        if (!callback_error) js.call(on_event, {js.string(event)}, callback_error);
      };
    api::CancelFn cancel;
    if (has_cancel)
      cancel = [&]() {
        if (callback_error) return true;
        napi_value answer = js.call(should_cancel, {}, callback_error);
        return callback_error.has_value() || js.truthy(answer);
      };
    return js.string(core.analyze(request, events, cancel));
  });
  if (callback_error) {
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (!pending) napi_throw(env, *callback_error);
    return nullptr;
  }
  return result;
}

// A Session method taking one string and returning the core's string.
template <std::string (SessionCore::*F)(const std::string&)>
napi_value string_method(napi_env env, napi_callback_info info) {
  return method<1>(env, info, [](const Js& js, SessionCore& core, const Args& a) {
    return js.string((core.*F)(js.to_string(a.argv[0], "the argument")));
  });
}

napi_value session_graph_json(napi_env env, napi_callback_info info) {
  return method<0>(env, info,
                   [](const Js& js, SessionCore& core, const Args&) { return js.string(core.graph_json()); });
}

napi_value session_set_relations(napi_env env, napi_callback_info info) {
  return method<1>(env, info, [](const Js& js, SessionCore& core, const Args& a) {
    core.set_relations(js.to_string(a.argv[0], "setRelations: name"));
    return js.undefined();
  });
}

napi_value session_export_config(napi_env env, napi_callback_info info) {
  return method<2>(env, info, [](const Js& js, SessionCore& core, const Args& a) {
    const std::string format = js.to_string(a.argv[1], "exportConfig: format");
    const std::vector<uint8_t> out = core.export_config(js.to_string(a.argv[0], "exportConfig: config"), format);
    if (quant::export_is_binary(format)) return js.bytes(out);
    return js.string(std::string(out.begin(), out.end()));
  });
}

napi_value session_output_count(napi_env env, napi_callback_info info) {
  return method<0>(env, info, [](const Js& js, SessionCore& core, const Args&) {
    return js.number(static_cast<double>(core.outputs().size()));
  });
}

napi_value session_output(napi_env env, napi_callback_info info) {
  return method<1>(env, info, [](const Js& js, SessionCore& core, const Args& a) {
    const int index = static_cast<int>(js.to_number(a.argv[0], "output: index"));
    const Tensor& t = core.output(index);
    napi_value o = js.object();
    js.set(o, "name", js.string(core.output_name(index)));
    js.set(o, "dtype", js.string(dtype_name(t.dtype())));
    js.set(o, "dims", js.numbers(t.shape()));
    js.set(o, "data", tensor_data(js, t));
    return o;
  });
}

napi_value session_free(napi_env env, napi_callback_info info) {
  return method<0>(env, info, [](const Js& js, SessionCore& core, const Args&) {
    core.release();
    return js.undefined();
  });
}

napi_value describe(napi_env env, napi_callback_info) {
  return guarded(env, [&] { return Js(env).string(api::describe_json()); });
}

// ---- module functions -----------------------------------------------------------------------------

// A module function: `body(js, args)` -> napi_value.
template <size_t N, class F>
napi_value function(napi_env env, napi_callback_info info, F&& body) {
  return guarded(env, [&] {
    Args a = args_of(env, info, N);
    return body(Js(env), a);
  });
}

napi_value merge_results(napi_env env, napi_callback_info info) {
  return function<1>(env, info, [](const Js& js, const Args& a) {
    return js.string(api::merge_results(js.to_string(a.argv[0], "mergeResults: results")));
  });
}

napi_value export_formats(napi_env env, napi_callback_info info) {
  return function<0>(env, info, [](const Js& js, const Args&) {
    napi_value a = js.array();
    for (const auto& f : quant::export_formats()) js.push(a, js.string(f.name));
    return a;
  });
}

napi_value set_convolution_mode(napi_env env, napi_callback_info info) {
  return function<1>(env, info, [](const Js& js, const Args& a) {
    ops::set_winograd_mode(ops::parse_winograd_mode(js.to_string(a.argv[0], "setConvolutionMode: mode")));
    return js.undefined();
  });
}

napi_value set_memory_budget(napi_env env, napi_callback_info info) {
  return function<1>(env, info, [](const Js& js, const Args& a) {
    const double bytes = js.type_of(a.argv[0]) == napi_number ? js.to_number(a.argv[0], "budget") : -1;
    check(bytes >= 0 && bytes <= 9007199254740992.0 && bytes == static_cast<double>(static_cast<uint64_t>(bytes)),
          "setMemoryBudget: the budget must be a whole number of bytes >= 0 (0 = the default)");
    ptq::set_memory_budget(static_cast<uint64_t>(bytes));
    return js.undefined();
  });
}

// {budget, inUse, peakInUse, heapBytes}: heapBytes is null (no wasm heap; the counted bytes are what
// the budget limits).
napi_value memory_usage(napi_env env, napi_callback_info info) {
  return function<0>(env, info, [](const Js& js, const Args&) {
    napi_value o = js.object();
    js.set(o, "budget", js.number(static_cast<double>(ptq::memory_budget())));
    js.set(o, "inUse", js.number(static_cast<double>(ptq::memory_in_use())));
    js.set(o, "peakInUse", js.number(static_cast<double>(ptq::memory_peak())));
    js.set(o, "heapBytes", js.null());
    return o;
  });
}

napi_value external_data_files(napi_env env, napi_callback_info info) {
  return function<2>(env, info, [](const Js& js, const Args& a) {
    check_model_fits({byte_length(js, a.argv[0]), 0});
    const OwnedBytes model = js.copy_bytes(a.argv[0], "externalDataFiles: model bytes");
    check(js.is_array(a.argv[1]), "externalDataFiles: paths must be an array of strings");
    std::vector<std::string> candidates;
    for (uint32_t i = 0, n = js.length(a.argv[1]); i < n; ++i)
      candidates.push_back(js.to_string(js.at(a.argv[1], i), "externalDataFiles: paths[" + std::to_string(i) + "]"));
    napi_value out = js.array();
    for (const ExternalFileMatch& match : external_data_matches(model, candidates)) {
      napi_value entry = js.object();
      js.set(entry, "location", js.string(match.location));
      js.set(entry, "path", match.path ? js.string(*match.path) : js.null());
      js.push(out, entry);
    }
    return out;
  });
}

napi_value calibrate(napi_env env, napi_callback_info info) {
  return function<3>(env, info, [](const Js& js, const Args& a) {
    const OwnedBytes model = js.copy_bytes(a.argv[0], "calibrate: model");
    const std::vector<NamedBytes> files = js_files(js, a.argv[1], "calibrate");
    CalibrateArgs args;
    napi_value options = a.argv[2];
    if (!js.is_absent(options)) {
      check(js.is_object(options), "calibrate: options must be an object");
      if (napi_value m = js.get(options, "method"); js.type_of(m) != napi_undefined)
        args.method = js.to_string(m, "calibrate: options.method");
      if (napi_value p = js.get(options, "percentile"); js.type_of(p) != napi_undefined)
        args.percentile = js.to_number(p, "calibrate: options.percentile");
      if (napi_value q = js.get(options, "int16"); js.type_of(q) != napi_undefined) {
        check(js.is_array(q), "calibrate: options.int16 must be an array of names");
        for (uint32_t i = 0, n = js.length(q); i < n; ++i)
          args.int16.push_back(js.to_string(js.at(q, i), "calibrate: options.int16[" + std::to_string(i) + "]"));
      }
      if (napi_value q = js.get(options, "qdq"); js.type_of(q) != napi_undefined)
        args.qdq = js.type_of(q) == napi_boolean && js.truthy(q);
      if (napi_value e = js.get(options, "externalFiles"); js.type_of(e) != napi_undefined)
        args.external = js_files(js, e, "calibrate: options.externalFiles");
    }
    const CalibrateOutput out = calibrate_model(model, entries_of(files), args);
    napi_value o = js.object();
    js.set(o, "model", js.bytes(out.model));
    js.set(o, "qdq", out.qdq ? js.bytes(*out.qdq) : js.null());
    js.set(o, "activations", js.number(static_cast<double>(out.activations)));
    js.set(o, "weights", js.number(static_cast<double>(out.weights)));
    js.set(o, "samples", js.number(static_cast<double>(out.samples)));
    return o;
  });
}

// {name: "native", simd, simdAvailable}: this engine and its GEMM instruction set (ops/gemm_kernel.h).
napi_value engine(napi_env env, napi_callback_info info) {
  return function<0>(env, info, [](const Js& js, const Args&) {
    napi_value o = js.object();
    js.set(o, "name", js.string("native"));
    js.set(o, "simd", js.string(ops::gemm_isa_name(ops::gemm_isa())));
    std::vector<std::string> names;
    for (ops::GemmIsa isa : ops::gemm_isas()) names.push_back(ops::gemm_isa_name(isa));
    js.set(o, "simdAvailable", js.strings(names));
    return o;
  });
}

napi_value set_simd(napi_env env, napi_callback_info info) {
  return function<1>(env, info, [](const Js& js, const Args& a) {
    ops::set_gemm_isa(js.to_string(a.argv[0], "setSimd: name"));
    return js.undefined();
  });
}

napi_value init(napi_env env, napi_value exports) {
  return guarded(env, [&] {
    const Js js(env);
    const napi_property_descriptor session_methods[] = {
        {"loadModel", nullptr, session_load_model, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"loadCalibrationData", nullptr, session_load_calibration_data, nullptr, nullptr, nullptr, napi_default,
         nullptr},
        {"run", nullptr, session_run, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"profile", nullptr, session_profile, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"outputCount", nullptr, session_output_count, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"output", nullptr, session_output, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"free", nullptr, session_free, nullptr, nullptr, nullptr, napi_default, nullptr},
        // embind's explicit destructor: the core is released now, the wrapper when collected.
        {"delete", nullptr, session_free, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"analyze", nullptr, session_analyze, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"listItems", nullptr, string_method<&SessionCore::list_items>, nullptr, nullptr, nullptr, napi_default,
         nullptr},
        {"resolveConfig", nullptr, string_method<&SessionCore::resolve_config>, nullptr, nullptr, nullptr, napi_default,
         nullptr},
        {"graphJson", nullptr, session_graph_json, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"setRelations", nullptr, session_set_relations, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"describe", nullptr, describe, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"exportConfig", nullptr, session_export_config, nullptr, nullptr, nullptr, napi_default, nullptr},
    };
    napi_value session_class;
    js.ok(napi_define_class(env, "Session", NAPI_AUTO_LENGTH, session_new, nullptr,
                            sizeof(session_methods) / sizeof(session_methods[0]), session_methods, &session_class));
    js.set(exports, "Session", session_class);
    const std::pair<const char*, napi_callback> functions[] = {
        {"describe", describe},
        {"exportFormats", export_formats},
        {"mergeResults", merge_results},
        {"externalDataFiles", external_data_files},
        {"setConvolutionMode", set_convolution_mode},
        {"setMemoryBudget", set_memory_budget},
        {"memoryUsage", memory_usage},
        {"calibrate", calibrate},
        {"engine", engine},
        {"setSimd", set_simd},
    };
    for (const auto& [name, fn] : functions) {
      napi_value f;
      js.ok(napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, nullptr, &f));
      js.set(exports, name, f);
    }
    return exports;
  });
}

}  // namespace
}  // namespace ptq::bind

NAPI_MODULE_INIT() { return ptq::bind::init(env, exports); }
