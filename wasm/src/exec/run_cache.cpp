#include "exec/run_cache.h"

#include <algorithm>
#include <cstring>

namespace ptq::exec {
namespace {

// The same tensor, or a dense one of the same dtype, shape and bytes: calibration samples are decoded
// again each time they are used (data/calibration_data.h), so a repeated run has equal inputs, not
// the same ones.
bool same_tensor(const Tensor& x, const Tensor& y) {
  if (x.same_view_as(y)) return true;
  return x.is_dense() && y.is_dense() && x.dtype() == y.dtype() && x.shape() == y.shape() &&
         std::memcmp(x.raw(), y.raw(), x.nbytes()) == 0;
}

bool same_tensors(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_tensor);
}

size_t record_bytes(const RunRecord& r) {
  size_t bytes = 0;
  for (const Tensor& t : r.values)
    if (t.defined()) bytes += t.nbytes();
  return bytes;
}

}  // namespace

const RunRecord* RunCache::find(const std::vector<Tensor>& inputs, const QuantConfig& config) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (same_tensors(it->inputs, inputs) && same_state(it->config, config)) {
      ++hits_;
      Entry hit = std::move(*it);
      entries_.erase(it);
      entries_.push_back(std::move(hit));
      return &entries_.back().record;
    }
  }
  return nullptr;
}

const RunRecord* RunCache::nearest(const std::vector<Tensor>& inputs,
                                   const std::function<size_t(const QuantConfig&)>& distance) const {
  const RunRecord* best = nullptr;
  size_t best_distance = 0;
  for (const Entry& e : entries_) {
    if (!same_tensors(e.inputs, inputs)) continue;
    const size_t d = distance(e.config);
    if (!best || d < best_distance) {
      best = &e.record;
      best_distance = d;
    }
  }
  return best;
}

void RunCache::insert(const std::vector<Tensor>& inputs, const QuantConfig& config, const RunRecord& record) {
  insert(inputs, config, record, record_bytes(record));
}

void RunCache::insert(const std::vector<Tensor>& inputs, const QuantConfig& config, const RunRecord& record,
                      size_t bytes) {
  if (bytes > budget_) return;
  trim(bytes);
  entries_.push_back({inputs, config, record, bytes});
}

void RunCache::set_budget(size_t bytes) {
  budget_ = bytes;
  trim(0);
}

void RunCache::trim(size_t room) {
  size_t held = room;
  for (const Entry& e : entries_) held += e.bytes;
  while (!entries_.empty() && held > budget_) {
    held -= entries_.front().bytes;
    entries_.pop_front();
  }
}

}  // namespace ptq::exec
