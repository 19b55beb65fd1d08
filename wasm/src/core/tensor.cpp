#include "core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/half.h"
#include "core/size.h"

namespace ptq {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float: return 4;
    case DType::UInt8: return 1;
    case DType::Int8: return 1;
    case DType::UInt16: return 2;
    case DType::Int16: return 2;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
    case DType::Float16: return 2;
    case DType::Double: return 8;
    case DType::UInt32: return 4;
    case DType::UInt64: return 8;
    case DType::BFloat16: return 2;
    case DType::UInt4: return 1;
    case DType::Int4: return 1;
    default: return 0;
  }
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::Float: return "float32";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Double: return "float64";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::BFloat16: return "bfloat16";
    case DType::UInt4: return "uint4";
    case DType::Int4: return "int4";
    default: return "undefined";
  }
}

std::string horizon_dtype_name(DType t) {
  std::string name = t == DType::Double ? "float64" : dtype_name(t);
  for (char& c : name) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return name;
}

bool dtype_supported(int32_t onnx_type) {
  return onnx_type != 0 && onnx_type != 8 && dtype_size(static_cast<DType>(onnx_type)) != 0;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    // A SizeError, so that the executor names the node whose kernel computed the shape.
    if (d < 0) throw SizeError("negative dimension in shape " + shape_str(shape));
    overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  // A zero dimension anywhere makes the count 0 whatever the other dimensions are.
  if (overflow && std::find(shape.begin(), shape.end(), int64_t{0}) == shape.end())
    throw SizeError("shape " + shape_str(shape) + " has more elements than 64-bit arithmetic can count");
  return overflow ? 0 : n;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

namespace {
constexpr size_t kAlignment = 64;

// Storage for a tensor, counted against the memory budget (core/size.h) until its last reference
// goes. `dtype` and `shape` only name the tensor in the errors.
std::shared_ptr<uint8_t> allocate(size_t bytes, size_t& capacity, DType dtype, const Shape& shape) {
  capacity = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (capacity == 0) capacity = kAlignment;
  const auto what = [&] { return "a " + dtype_name(dtype) + " tensor of shape " + shape_str(shape); };
  if (!try_reserve_memory(capacity)) throw memory_budget_error(what(), capacity);
  void* p = std::aligned_alloc(kAlignment, capacity);
  if (!p) {
    release_memory(capacity);
    // Within the budget, but the heap cannot grow that far (the wasm heap holds more than tensors).
    throw SizeError(what() + " needs " + byte_size_str(capacity) + ", more than the heap can still give (" +
                    byte_size_str(memory_in_use()) + " already in use by tensors)");
  }
  const size_t counted = capacity;
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [counted](uint8_t* q) {
    std::free(q);
    release_memory(counted);
  });
}
}  // namespace

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  check(dtype_size(dtype) != 0, "unsupported tensor dtype " + dtype_name(dtype));
  numel_ = shape_numel(shape_);
  if (static_cast<uint64_t>(numel_) > kMaxAllocationBytes / dtype_size(dtype)) {
    const std::string what = "a " + dtype_name(dtype) + " tensor of shape " + shape_str(shape_);
    allocation_count(numel_, dtype_size(dtype), what.c_str());  // throws the SizeError
  }
  owner_ = allocate(nbytes(), capacity_, dtype_, shape_);
  data_ = owner_.get();
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  std::memset(t.mutable_raw(), 0, t.nbytes());
  return t;
}

Tensor Tensor::view(DType dtype, Shape shape, const void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  t.data_ = static_cast<const uint8_t*>(data);
  return t;
}

Tensor Tensor::alias(const Tensor& base, Shape shape, size_t byte_offset) {
  Tensor t = base;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  t.data_ = base.data_ + byte_offset;
  // In 64-bit arithmetic: on wasm32 a huge shape's byte size would wrap in size_t.
  const uint64_t bytes = static_cast<uint64_t>(t.numel_) * dtype_size(t.dtype_);
  check(t.numel_ <= static_cast<int64_t>(kMaxAllocationBytes) && byte_offset <= base.nbytes() &&
            bytes <= static_cast<uint64_t>(base.nbytes() - byte_offset),
        "tensor alias out of range");
  return t;
}

Tensor Tensor::from_floats(Shape shape, const std::vector<float>& values) {
  Tensor t(DType::Float, std::move(shape));
  check(static_cast<int64_t>(values.size()) == t.numel(), "from_floats: value count does not match shape");
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * 4);
  return t;
}

Tensor Tensor::from_int64s(Shape shape, const std::vector<int64_t>& values) {
  Tensor t(DType::Int64, std::move(shape));
  check(static_cast<int64_t>(values.size()) == t.numel(), "from_int64s: value count does not match shape");
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * 8);
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  check(shape_numel(shape) == numel_,
        "cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(t.mutable_raw(), data_, nbytes());
  return t;
}

double Tensor::get_as_double(int64_t i) const {
  switch (dtype_) {
    case DType::Float: return data<float>()[i];
    case DType::Double: return data<double>()[i];
    case DType::Float16: return half_to_float(data<uint16_t>()[i]);
    case DType::BFloat16: return bfloat16_to_float(data<uint16_t>()[i]);
    case DType::UInt8: return data<uint8_t>()[i];
    case DType::Int8: return data<int8_t>()[i];
    case DType::Int4: return data<int8_t>()[i];
    case DType::UInt4: return data<uint8_t>()[i];
    case DType::UInt16: return data<uint16_t>()[i];
    case DType::Int16: return data<int16_t>()[i];
    case DType::Int32: return data<int32_t>()[i];
    case DType::Int64: return static_cast<double>(data<int64_t>()[i]);
    case DType::UInt32: return data<uint32_t>()[i];
    case DType::UInt64: return static_cast<double>(data<uint64_t>()[i]);
    case DType::Bool: return data<uint8_t>()[i] ? 1.0 : 0.0;
    default: fail("get_as_double: unsupported dtype " + dtype_name(dtype_));
  }
}

int64_t Tensor::get_as_int64(int64_t i) const {
  switch (dtype_) {
    case DType::Int64: return data<int64_t>()[i];
    case DType::Int32: return data<int32_t>()[i];
    case DType::UInt64: return static_cast<int64_t>(data<uint64_t>()[i]);
    default: {
      const double v = get_as_double(i);
      if (!std::isfinite(v)) fail("non-finite value where an integer was expected");
      return static_cast<int64_t>(v);
    }
  }
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = get_as_int64(i);
  return out;
}

std::vector<float> Tensor::to_float_vector() const {
  std::vector<float> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = static_cast<float>(get_as_double(i));
  return out;
}

Tensor Tensor::to_float() const {
  if (dtype_ == DType::Float) return *this;
  return cast_tensor(*this, DType::Float);
}

namespace {
template <class To>
To from_double(double v) {
  if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != 0.0;
  } else {
    // ONNX Cast float->int: truncation; out-of-range values are undefined in the spec, we saturate.
    if (std::isnan(v)) return 0;
    const double lo = static_cast<double>(std::numeric_limits<To>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<To>::max());
    if (v <= lo) return std::numeric_limits<To>::lowest();
    if (v >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  }
}

template <class To>
void cast_loop(const Tensor& in, To* out) {
  const int64_t n = in.numel();
  if (in.dtype() == DType::Int64 && std::is_integral_v<To> && !std::is_same_v<To, bool>) {
    const int64_t* src = in.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<To>(src[i]);  // wrap like numpy
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = from_double<To>(in.get_as_double(i));
}
}  // namespace

Tensor cast_tensor(const Tensor& input, DType to) {
  if (input.dtype() == to) return input;
  Tensor out(to, input.shape());
  const int64_t n = input.numel();
  switch (to) {
    case DType::Float:
      if (input.dtype() == DType::Float16) {
        const uint16_t* s = input.data<uint16_t>();
        float* d = out.mutable_data<float>();
        for (int64_t i = 0; i < n; ++i) d[i] = half_to_float(s[i]);
      } else {
        cast_loop(input, out.mutable_data<float>());
      }
      break;
    case DType::Double: cast_loop(input, out.mutable_data<double>()); break;
    case DType::Int8: cast_loop(input, out.mutable_data<int8_t>()); break;
    case DType::UInt8: cast_loop(input, out.mutable_data<uint8_t>()); break;
    case DType::Int16: cast_loop(input, out.mutable_data<int16_t>()); break;
    case DType::UInt16: cast_loop(input, out.mutable_data<uint16_t>()); break;
    case DType::Int32: cast_loop(input, out.mutable_data<int32_t>()); break;
    case DType::UInt32: cast_loop(input, out.mutable_data<uint32_t>()); break;
    case DType::Int64: cast_loop(input, out.mutable_data<int64_t>()); break;
    case DType::UInt64: cast_loop(input, out.mutable_data<uint64_t>()); break;
    case DType::Bool: {
      uint8_t* d = out.mutable_data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) d[i] = input.get_as_double(i) != 0.0 ? 1 : 0;
      break;
    }
    case DType::Float16: {
      uint16_t* d = out.mutable_data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) d[i] = float_to_half(static_cast<float>(input.get_as_double(i)));
      break;
    }
    case DType::BFloat16: {
      uint16_t* d = out.mutable_data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) d[i] = float_to_bfloat16(static_cast<float>(input.get_as_double(i)));
      break;
    }
    default: fail("Cast to " + dtype_name(to) + " is not supported");
  }
  return out;
}

// ---- Sequences and optionals ------------------------------------------------------------------

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::Sequence: return "sequence";
    case ValueKind::Optional: return "optional";
    default: return "tensor";
  }
}

Tensor Tensor::sequence(std::vector<Tensor> items, DType elem_dtype) {
  for (const Tensor& t : items) {
    check(t.defined() && t.is_dense(), "a sequence holds tensors, not " + value_str(t));
    check(elem_dtype == DType::Undefined || t.dtype() == elem_dtype,
          "a sequence of " + dtype_name(elem_dtype) + " tensors cannot hold a " + dtype_name(t.dtype()) + " tensor");
    elem_dtype = t.dtype();
  }
  Tensor s;
  s.items_ = std::make_shared<const ValueItems>(ValueItems{ValueKind::Sequence, elem_dtype, std::move(items)});
  return s;
}

Tensor Tensor::optional(Tensor item) {
  check(item.kind() != ValueKind::Optional, "an optional cannot hold an optional");
  std::vector<Tensor> items;
  if (item.defined()) items.push_back(std::move(item));
  Tensor o;
  o.items_ = std::make_shared<const ValueItems>(ValueItems{ValueKind::Optional, DType::Undefined, std::move(items)});
  return o;
}

ValueKind Tensor::kind() const { return items_ ? items_->kind : ValueKind::Dense; }

const std::vector<Tensor>& Tensor::items() const {
  static const std::vector<Tensor> none;
  return items_ ? items_->items : none;
}

DType Tensor::elem_dtype() const { return items_ ? items_->elem_dtype : DType::Undefined; }

size_t Tensor::items_nbytes() const {
  size_t bytes = 0;
  for (const Tensor& t : items_->items) bytes += t.nbytes();
  return bytes;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.kind() != b.kind()) return false;
  if (!a.is_dense()) {
    if (a.same_view_as(b)) return true;
    if (a.elem_dtype() != b.elem_dtype() || a.items().size() != b.items().size()) return false;
    for (size_t i = 0; i < a.items().size(); ++i)
      if (!same_bits(a.items()[i], b.items()[i])) return false;
    return true;
  }
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.raw() == b.raw()) return true;
  return std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

std::string value_str(const Tensor& t) {
  switch (t.kind()) {
    case ValueKind::Sequence:
      return "sequence of " + std::to_string(t.items().size()) + " " +
             (t.elem_dtype() == DType::Undefined ? std::string() : dtype_name(t.elem_dtype()) + " ") + "tensor(s)";
    case ValueKind::Optional: return t.items().empty() ? "empty optional" : "optional holding " + value_str(t.items()[0]);
    default: return t.defined() ? dtype_name(t.dtype()) + " " + shape_str(t.shape()) : "undefined value";
  }
}

}  // namespace ptq
