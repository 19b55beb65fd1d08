#pragma once
// Checked size arithmetic. In the wasm32 build size_t is 32 bits: a count or byte size computed in
// size_t wraps silently and the kernel then writes outside its buffer. Every element count and byte
// size derived from a shape, an attribute or a file is therefore computed here in 64-bit arithmetic
// with overflow checks, and any allocation larger than a WebAssembly heap can hold is refused with a
// SizeError before anything is allocated. Buffers that each fit can still exhaust the heap together,
// so tensor storage and the kernels' large scratch buffers are also counted against a memory budget
// (below). The executor adds the node's name to a SizeError raised inside a kernel.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace ptq {

// The largest single allocation (a tensor's storage or a kernel's scratch buffer): a wasm32 heap is
// at most 4 GiB, the module's own memory included, so nothing larger can be allocated there. The
// native build keeps the same limit so both builds accept and reject the same models.
inline constexpr uint64_t kMaxAllocationBytes = (uint64_t{1} << 32) - (uint64_t{1} << 16);

// A size that overflows 64-bit arithmetic or cannot fit the heap.
class SizeError : public Error {
 public:
  using Error::Error;
};

// The memory budget: the most bytes of tensor storage (Tensor, core/tensor.h), of the kernels'
// large scratch buffers (ops::gemm_scratch) and packed weights, and of loaded models' own bytes
// (core/model_memory.h) that may be alive at once in this process (in wasm: in this module's heap).
// The default leaves 1 GiB of a 4 GiB wasm heap to the module, the calibration files while they are
// read and everything else not counted; the native build keeps the same default so both builds
// accept and reject the same models. Every such allocation reserves its bytes first and releases them
// when freed: a reservation beyond the budget is a SizeError naming what was asked, what is held and
// the budget, and nothing is allocated.
inline constexpr uint64_t kDefaultMemoryBudgetBytes = uint64_t{3} << 30;
uint64_t memory_budget();
void set_memory_budget(uint64_t bytes);  // 0 restores kDefaultMemoryBudgetBytes
uint64_t memory_in_use();                // bytes reserved and not yet released
// Counts `bytes` as held; throws the budget's SizeError for `what` ("a float32 tensor of shape [...]")
// when they do not fit, counting nothing.
void reserve_memory(uint64_t bytes, const std::string& what);
// The same without building `what` on the common path: false (nothing counted) when they do not fit.
bool try_reserve_memory(uint64_t bytes);
void release_memory(uint64_t bytes);
// The error reserve_memory throws: "<what> needs N bytes, but M bytes are already in use and the memory budget
// is B bytes".
SizeError memory_budget_error(const std::string& what, uint64_t bytes);

// "17179869184 bytes (16 GiB)": how size errors spell a byte count.
std::string byte_size_str(uint64_t bytes);

// a * b and a + b for non-negative sizes; a SizeError naming `what` when the exact result exceeds
// int64 (negative operands are a SizeError too: they are never a valid size).
int64_t size_mul(int64_t a, int64_t b, const char* what);
int64_t size_add(int64_t a, int64_t b, const char* what);
// a + b and a * b for any signed operands (pads may be negative), SizeError on int64 overflow.
int64_t int64_add(int64_t a, int64_t b, const char* what);
int64_t int64_mul(int64_t a, int64_t b, const char* what);

// Element count of a buffer of `count` elements of `element_bytes` each, as size_t, after checking
// that count >= 0 and count * element_bytes <= kMaxAllocationBytes (SizeError naming `what` otherwise).
size_t allocation_count(int64_t count, size_t element_bytes, const char* what);
// The same for a count that is itself a product a * b.
size_t allocation_count(int64_t a, int64_t b, size_t element_bytes, const char* what);

}  // namespace ptq
