#include "core/size.h"

#include <atomic>
#include <cstdio>

#include "core/model_memory.h"

namespace ptq {

std::string byte_size_str(uint64_t bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < sizeof(kUnits) / sizeof(kUnits[0])) {
    v /= 1024.0;
    ++unit;
  }
  std::string text = std::to_string(bytes) + " bytes";
  if (unit > 0) {
    char scaled[32];
    std::snprintf(scaled, sizeof(scaled), " (%.1f %s)", v, kUnits[unit]);
    text += scaled;
  }
  return text;
}

namespace {

[[noreturn]] void overflow(const char* what, const char* op, int64_t a, int64_t b) {
  throw SizeError(std::string(what) + ": " + std::to_string(a) + op + std::to_string(b) +
                  (a < 0 || b < 0 ? " is not a valid size" : " overflows 64-bit arithmetic"));
}

}  // namespace

int64_t size_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) overflow(what, " x ", a, b);
  return r;
}

int64_t size_add(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) overflow(what, " + ", a, b);
  return r;
}

int64_t int64_add(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) overflow(what, " + ", a, b);
  return r;
}

int64_t int64_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) overflow(what, " x ", a, b);
  return r;
}

size_t allocation_count(int64_t count, size_t element_bytes, const char* what) {
  if (count < 0) throw SizeError(std::string(what) + ": negative element count " + std::to_string(count));
  const uint64_t limit = kMaxAllocationBytes / (element_bytes ? element_bytes : 1);
  if (static_cast<uint64_t>(count) > limit) {
    uint64_t bytes = 0;
    const bool wraps = __builtin_mul_overflow(static_cast<uint64_t>(count), static_cast<uint64_t>(element_bytes), &bytes);
    throw SizeError(std::string(what) + " needs " +
                    (wraps ? std::to_string(count) + " x " + std::to_string(element_bytes) + " bytes"
                           : byte_size_str(bytes)) +
                    ", more than the " + byte_size_str(kMaxAllocationBytes) +
                    " one buffer may take in a WebAssembly heap");
  }
  return static_cast<size_t>(count);
}

namespace {
// Per thread: each wasm module instance (a page's or the CLI's worker) has its own heap and budget, and
// the native addon's worker threads each get theirs the same way (a worker's tensors live and die on
// its thread).
thread_local std::atomic<uint64_t> g_memory_budget{kDefaultMemoryBudgetBytes};
thread_local std::atomic<uint64_t> g_memory_in_use{0};
thread_local std::atomic<uint64_t> g_memory_peak{0};

void note_peak(uint64_t held) {
  uint64_t peak = g_memory_peak.load(std::memory_order_relaxed);
  while (held > peak && !g_memory_peak.compare_exchange_weak(peak, held, std::memory_order_relaxed)) {
  }
}
}  // namespace

uint64_t memory_budget() { return g_memory_budget.load(std::memory_order_relaxed); }

void set_memory_budget(uint64_t bytes) {
  g_memory_budget.store(bytes ? bytes : kDefaultMemoryBudgetBytes, std::memory_order_relaxed);
}

uint64_t memory_in_use() { return g_memory_in_use.load(std::memory_order_relaxed); }

uint64_t memory_peak() { return g_memory_peak.load(std::memory_order_relaxed); }

bool try_reserve_memory(uint64_t bytes) {
  const uint64_t budget = g_memory_budget.load(std::memory_order_relaxed);
  uint64_t held = g_memory_in_use.load(std::memory_order_relaxed);
  do {
    if (bytes > budget || held > budget - bytes) return false;
  } while (!g_memory_in_use.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  note_peak(held + bytes);
  return true;
}

void release_memory(uint64_t bytes) { g_memory_in_use.fetch_sub(bytes, std::memory_order_relaxed); }

SizeError memory_budget_error(const std::string& what, uint64_t bytes) {
  return SizeError(what + " needs " + byte_size_str(bytes) + ", but " + byte_size_str(memory_in_use()) +
                   " are already in use and the memory budget is " + byte_size_str(memory_budget()));
}

void reserve_memory(uint64_t bytes, const std::string& what) {
  if (!try_reserve_memory(bytes)) throw memory_budget_error(what, bytes);
}

size_t allocation_count(int64_t a, int64_t b, size_t element_bytes, const char* what) {
  return allocation_count(size_mul(a, b, what), element_bytes, what);
}

}  // namespace ptq
