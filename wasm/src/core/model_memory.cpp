#include "core/model_memory.h"

#include <string>

namespace ptq {

void check_model_fits(const ModelBytes& bytes) {
  const uint64_t budget = memory_budget(), held = memory_in_use(), total = bytes.total();
  if (total <= budget && held <= budget - total) return;
  std::string parts = "its file " + byte_size_str(bytes.file);
  if (bytes.external) parts += ", its external data " + byte_size_str(bytes.external);
  throw SizeError("the model needs " + byte_size_str(total) + " (" + parts +
                  ") of the wasm heap for as long as it is loaded, before any tensor is computed, but " +
                  byte_size_str(held) + " are already in use and the memory budget is " + byte_size_str(budget) +
                  " (what the 4 GB WebAssembly heap leaves for a model and its tensors): it cannot be loaded");
}

ModelReservation::ModelReservation(const ModelBytes& bytes) {
  check_model_fits(bytes);
  reserve_memory(bytes.total(), "the model");
  bytes_ = bytes.total();
}

ModelReservation& ModelReservation::operator=(ModelReservation&& other) noexcept {
  if (this != &other) {
    release_memory(bytes_);
    bytes_ = other.bytes_;
    other.bytes_ = 0;
  }
  return *this;
}

}  // namespace ptq
