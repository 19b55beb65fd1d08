#pragma once
// Keep-all records of recent runs, so a run repeated with the same inputs and configuration is
// served again instead of recomputed. A sweep split into parts repeats its base runs in every part,
// and a worker of the page's pool usually gets several parts of one sweep.
#include <cstddef>
#include <deque>
#include <vector>

#include "core/tensor.h"
#include "exec/run_record.h"

namespace ptq::exec {

class RunCache {
 public:
  explicit RunCache(size_t budget) : budget_(budget) {}

  // The record of a run of `inputs` under `config`, or nullptr. The key is the inputs' tensor
  // identity (the cache keeps them alive, so an address cannot be reused) and the configuration.
  const RunRecord* find(const std::vector<Tensor>& inputs, const QuantConfig& config);
  // Holds `record` if it fits the budget at all, dropping the oldest records to make room. Sizes are
  // the tensors' nbytes, views counted in full.
  void insert(const std::vector<Tensor>& inputs, const QuantConfig& config, const RunRecord& record);

  void set_budget(size_t bytes);  // 0 disables the cache
  void clear() { entries_.clear(); }
  size_t hits() const { return hits_; }

 private:
  // Drops the oldest records until `room` more bytes fit the budget.
  void trim(size_t room);

  struct Entry {
    std::vector<Tensor> inputs;
    QuantConfig config;
    RunRecord record;
    size_t bytes = 0;
  };
  std::deque<Entry> entries_;  // oldest first
  size_t budget_;
  size_t hits_ = 0;
};

}  // namespace ptq::exec
