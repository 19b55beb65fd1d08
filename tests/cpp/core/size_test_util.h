#pragma once
// Helpers for tests of size checks and the memory budget (core/size.h).
#include <exception>
#include <string>
#include <utility>

#include "core/size.h"

namespace ptq::test {

// The message of the SizeError `f` throws; "no error", or "not a SizeError: ..." for anything else.
template <class F>
std::string size_error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const SizeError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a SizeError: ") + e.what();
  }
  return "no error";
}

// Sets the memory budget for one scope and restores the default after it.
struct ScopedMemoryBudget {
  explicit ScopedMemoryBudget(uint64_t bytes) { set_memory_budget(bytes); }
  ~ScopedMemoryBudget() { set_memory_budget(0); }
  ScopedMemoryBudget(const ScopedMemoryBudget&) = delete;
  ScopedMemoryBudget& operator=(const ScopedMemoryBudget&) = delete;
};

}  // namespace ptq::test
