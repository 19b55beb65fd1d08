#pragma once
// Keep-all records of recent runs, so a run repeated with the same inputs and configuration is
// served again instead of recomputed. A sweep split into parts repeats its base runs in every part,
// and a worker of the page's pool usually gets several parts of one sweep.
#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

#include "core/tensor.h"
#include "exec/run_record.h"

namespace ptq::exec {

class RunCache {
 public:
  explicit RunCache(size_t budget) : budget_(budget) {}

  // The record of a run of `inputs` under `config`, or nullptr; a hit becomes the most recently used.
  // The key is the inputs (the same tensors, or equal ones: same dtype, shape and bytes; the cache
  // keeps them alive) and the configuration.
  const RunRecord* find(const std::vector<Tensor>& inputs, const QuantConfig& config);
  // The record of `inputs` whose configuration has the smallest `distance`, or nullptr.
  const RunRecord* nearest(const std::vector<Tensor>& inputs,
                           const std::function<size_t(const QuantConfig&)>& distance) const;
  // Holds `record` if it fits the budget at all, dropping the least recently used records to make
  // room. Sizes are the tensors' nbytes, views counted in full, or `bytes` when given (a record
  // derived from another counts the tensors it adds).
  void insert(const std::vector<Tensor>& inputs, const QuantConfig& config, const RunRecord& record);
  void insert(const std::vector<Tensor>& inputs, const QuantConfig& config, const RunRecord& record, size_t bytes);

  void set_budget(size_t bytes);  // 0 disables the cache
  void clear() { entries_.clear(); }
  bool empty() const { return entries_.empty(); }
  size_t hits() const { return hits_; }

 private:
  // Drops the least recently used records until `room` more bytes fit the budget.
  void trim(size_t room);

  struct Entry {
    std::vector<Tensor> inputs;
    QuantConfig config;
    RunRecord record;
    size_t bytes = 0;
  };
  std::deque<Entry> entries_;  // least recently used first
  size_t budget_;
  size_t hits_ = 0;
};

}  // namespace ptq::exec
