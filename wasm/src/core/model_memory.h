#pragma once
// A loaded model's own bytes against the memory budget (core/size.h). A session holds its model's
// file and external data in the heap for as long as the model is loaded (the weights stay views into
// them), so they are counted like tensors: the budget then bounds everything big the heap holds, and
// a model whose bytes alone cannot fit is refused before they are copied in.
#include <cstdint>

#include "core/size.h"

namespace ptq {

// The most bytes counted against the memory budget at once so far (tensors, scratch, model bytes).
uint64_t memory_peak();

// A model's bytes: its file and its external data (the files given, or the sizes its tensors declare).
struct ModelBytes {
  uint64_t file = 0;
  uint64_t external = 0;
  uint64_t total() const { return file > UINT64_MAX - external ? UINT64_MAX : file + external; }
};

// Throws a SizeError when `bytes` do not fit the memory budget beside what is already counted:
// "the model needs N bytes (its file F, its external data E) of the wasm heap for as long as it is
// loaded, before any tensor is computed, but M bytes are already in use and the memory budget is B
// (...): it cannot be loaded".
void check_model_fits(const ModelBytes& bytes);

// Counts a loaded model's bytes against the budget (check_model_fits first) until destroyed.
class ModelReservation {
 public:
  ModelReservation() = default;
  explicit ModelReservation(const ModelBytes& bytes);
  ModelReservation(ModelReservation&& other) noexcept : bytes_(other.bytes_) { other.bytes_ = 0; }
  ModelReservation& operator=(ModelReservation&& other) noexcept;
  ModelReservation(const ModelReservation&) = delete;
  ModelReservation& operator=(const ModelReservation&) = delete;
  ~ModelReservation() { release_memory(bytes_); }

 private:
  uint64_t bytes_ = 0;
};

}  // namespace ptq
