#pragma once
// A dense, row-major tensor. Storage is shared and immutable once a kernel has produced it, so
// Reshape/Identity/Squeeze can return views without copying, and initializers can be views into
// the model's bytes (zero-copy reader). Kernels write only into tensors they have just allocated.
//
// A Tensor is also what the executor passes between nodes, and ONNX has values that are not tensors:
// sequences of tensors (sequence_type) and optionals (optional_type: empty, or holding a tensor or a
// sequence). Such a value is a Tensor of kind Sequence or Optional: no dtype, shape or storage of its
// own, its elements in items() (shared, immutable). Only the ops registered as taking them
// (OpDef::values, exec/registry.h) see one: the executor refuses it, naming the node, at every other
// op, and the analyses take dense tensors only. A dense tensor carries one null pointer more, nothing
// else changes on its path.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace ptq {

using Shape = std::vector<int64_t>;

enum class ValueKind : uint8_t { Dense, Sequence, Optional };
const char* value_kind_name(ValueKind kind);  // "tensor", "sequence", "optional"

class Tensor;
struct ValueItems;

int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[1, 3, 224, 224]"

class Tensor {
 public:
  Tensor() = default;
  // Allocates uninitialised storage (64-byte aligned).
  Tensor(DType dtype, Shape shape);
  // Allocates and fills with zeros.
  static Tensor zeros(DType dtype, Shape shape);
  // Borrows `data` without owning it; the caller keeps the bytes alive (e.g. the model buffer).
  static Tensor view(DType dtype, Shape shape, const void* data);
  // Shares storage with `base`, keeping it alive, at a byte offset.
  static Tensor alias(const Tensor& base, Shape shape, size_t byte_offset = 0);
  // Scalars and small constants, handy for tests and shape ops.
  static Tensor from_floats(Shape shape, const std::vector<float>& values);
  static Tensor from_int64s(Shape shape, const std::vector<int64_t>& values);

  // A sequence of `items` (each a dense tensor of `elem_dtype`; Undefined only while empty and untyped).
  static Tensor sequence(std::vector<Tensor> items, DType elem_dtype);
  // An optional: empty (`item` undefined) or holding `item` (a dense tensor or a sequence).
  static Tensor optional(Tensor item);

  bool defined() const { return dtype_ != DType::Undefined || items_ != nullptr; }
  ValueKind kind() const;
  bool is_dense() const { return items_ == nullptr; }
  // A sequence's elements; an optional's element (none when empty). Empty for a dense tensor.
  const std::vector<Tensor>& items() const;
  // A sequence's element dtype (Undefined for a dense tensor or an optional).
  DType elem_dtype() const;
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t dim(size_t i) const { return shape_[i]; }
  int64_t numel() const { return numel_; }
  // A sequence or optional: the bytes of its elements.
  size_t nbytes() const { return items_ ? items_nbytes() : static_cast<size_t>(numel_) * dtype_size(dtype_); }

  const void* raw() const { return data_; }
  // Mutable access: only legal on a tensor the caller allocated itself (not a view/alias).
  void* mutable_raw() const { return const_cast<uint8_t*>(data_); }
  template <class T>
  const T* data() const {
    return reinterpret_cast<const T*>(data_);
  }
  template <class T>
  T* mutable_data() const {
    return reinterpret_cast<T*>(const_cast<uint8_t*>(data_));
  }
  // Same storage, new shape (numel must match). Zero-copy.
  Tensor reshaped(Shape shape) const;
  // Deep copy into fresh storage.
  Tensor clone() const;
  // True when both share the same storage pointer (used by tests of zero-copy paths).
  bool shares_storage_with(const Tensor& other) const { return data_ == other.data_; }
  // The same bytes seen the same way (data pointer, dtype, shape): the key of caches of derived data.
  bool same_view_as(const Tensor& other) const {
    return data_ == other.data_ && dtype_ == other.dtype_ && shape_ == other.shape_ && items_ == other.items_;
  }
  // Bytes owned by this tensor's storage block (0 for views) — feeds the executor's cache budget.
  size_t owned_bytes() const { return owner_ ? capacity_ : 0; }

  // Read element i converted to double / int64 (any numeric dtype); for shape ops and tests.
  double get_as_double(int64_t i) const;
  int64_t get_as_int64(int64_t i) const;
  // All elements as int64 (shape inputs such as Reshape's shape, Slice's starts).
  std::vector<int64_t> to_int64_vector() const;
  std::vector<float> to_float_vector() const;
  // Converts to float32 (Float stays shared, others are converted into new storage).
  Tensor to_float() const;

 private:
  DType dtype_ = DType::Undefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<uint8_t> owner_;
  size_t capacity_ = 0;
  const uint8_t* data_ = nullptr;
  std::shared_ptr<const ValueItems> items_;  // set for a sequence or an optional only
  size_t items_nbytes() const;
};

// The payload of a sequence or optional value.
struct ValueItems {
  ValueKind kind = ValueKind::Sequence;
  DType elem_dtype = DType::Undefined;
  std::vector<Tensor> items;
};

// The same value bit for bit: dtype, shape and bytes of a dense tensor; kind, element dtype and every
// element of a sequence or optional.
bool same_bits(const Tensor& a, const Tensor& b);
// "float32 [2, 3]", "sequence of 2 float32 tensors", "empty optional", "optional holding ..."
std::string value_str(const Tensor& t);

// Converts a tensor to another dtype with ONNX Cast semantics (float->int truncates toward zero,
// float->float16 rounds to nearest even, ->bool is != 0).
Tensor cast_tensor(const Tensor& input, DType to);

}  // namespace ptq
