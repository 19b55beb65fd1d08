// Sequence ops: SequenceEmpty, SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase,
// SequenceLength, SplitToSequence, ConcatFromSequence and SequenceMap. A sequence is a value of kind
// Sequence (core/tensor.h): an immutable list of tensors of one dtype, so inserting or erasing makes a
// new list that shares the elements' storage. Elements are moved by byte size, so every fixed-size
// dtype works. SequenceMap runs its body through the executor running the node, like Loop.
#include <string>
#include <vector>

#include "core/size.h"
#include "exec/registry.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

const Tensor& sequence_input(const KernelContext& ctx, size_t i) {
  const Tensor& t = ctx.required(i);
  if (t.kind() != ValueKind::Sequence) ctx.fail("input " + std::to_string(i) + " must be a sequence, got a " + value_str(t));
  return t;
}

const Tensor& tensor_input(const KernelContext& ctx, size_t i) {
  const Tensor& t = ctx.required(i);
  if (!t.is_dense()) ctx.fail("input " + std::to_string(i) + " must be a tensor, got a " + value_str(t));
  return t;
}

// A position input (one int32 or int64) into a sequence of `length` elements: negative positions count
// from the end; valid positions are [-length, length - 1], or up to `length` when `one_past_end`.
size_t position(const KernelContext& ctx, size_t input, size_t length, bool one_past_end) {
  const Tensor& p = tensor_input(ctx, input);
  ctx.check((p.dtype() == DType::Int64 || p.dtype() == DType::Int32) && p.numel() == 1,
            "'position' must be one int32 or int64, got " + value_str(p));
  const int64_t n = static_cast<int64_t>(length);
  const int64_t v = p.get_as_int64(0);
  const int64_t last = one_past_end ? n : n - 1;
  ctx.check(v >= -n && v <= last, "position " + std::to_string(v) + " is out of range [" + std::to_string(-n) + ", " +
                                      std::to_string(last) + "] for a sequence of " + std::to_string(n) + " tensor(s)");
  return static_cast<size_t>(v < 0 ? v + n : v);
}

Tensor sequence_of(const KernelContext& ctx, std::vector<Tensor> items, DType elem_dtype) {
  for (const Tensor& t : items)
    ctx.check(elem_dtype == DType::Undefined || t.dtype() == elem_dtype,
              "a sequence of " + dtype_name(elem_dtype) + " tensors cannot take a " + dtype_name(t.dtype()) + " tensor");
  return Tensor::sequence(std::move(items), elem_dtype);
}

void sequence_empty(KernelContext& ctx) {
  const auto dtype = static_cast<DType>(ctx.node.attr_int("dtype", static_cast<int64_t>(DType::Float)));
  ctx.check(dtype_size(dtype) > 0, "attribute 'dtype' " + std::to_string(static_cast<int>(dtype)) +
                                       " is not a tensor element type the executor holds");
  ctx.outputs[0] = Tensor::sequence({}, dtype);
}

void sequence_construct(KernelContext& ctx) {
  std::vector<Tensor> items;
  for (size_t i = 0; i < ctx.input_count(); ++i) items.push_back(tensor_input(ctx, i));
  ctx.check(!items.empty(), "needs at least one input");
  const DType elem = items[0].dtype();
  ctx.outputs[0] = sequence_of(ctx, std::move(items), elem);
}

void sequence_at(KernelContext& ctx) {
  const Tensor& s = sequence_input(ctx, 0);
  ctx.outputs[0] = s.items()[position(ctx, 1, s.items().size(), false)];
}

void sequence_insert(KernelContext& ctx) {
  const Tensor& s = sequence_input(ctx, 0);
  const Tensor& t = tensor_input(ctx, 1);
  std::vector<Tensor> items = s.items();
  const size_t at = ctx.input(2) ? position(ctx, 2, items.size(), true) : items.size();
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), t);
  ctx.outputs[0] = sequence_of(ctx, std::move(items), s.elem_dtype());
}

void sequence_erase(KernelContext& ctx) {
  const Tensor& s = sequence_input(ctx, 0);
  std::vector<Tensor> items = s.items();
  ctx.check(!items.empty(), "cannot erase from an empty sequence");
  const size_t at = ctx.input(1) ? position(ctx, 1, items.size(), false) : items.size() - 1;
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(at));
  ctx.outputs[0] = Tensor::sequence(std::move(items), s.elem_dtype());
}

void sequence_length(KernelContext& ctx) {
  ctx.outputs[0] = Tensor::from_int64s({}, {static_cast<int64_t>(sequence_input(ctx, 0).items().size())});
}

// Chunks of `input` along `axis`: lengths from 'split' (one length: equal chunks, the last one
// smaller; a list: those lengths, summing to the dim), else chunks of 1 with the axis removed when
// keepdims = 0.
void split_to_sequence(KernelContext& ctx) {
  const Tensor& input = tensor_input(ctx, 0);
  const int64_t rank = static_cast<int64_t>(input.rank());
  ctx.check(rank >= 1, "input must have at least one dimension");
  const size_t axis = static_cast<size_t>(movement::normalize_axis(ctx, ctx.node.attr_int("axis", 0), rank));
  const int64_t dim = input.dim(axis);
  std::vector<int64_t> lengths;
  bool squeeze = false;
  if (const Tensor* split = ctx.input(1)) {
    ctx.check(split->is_dense() && (split->dtype() == DType::Int64 || split->dtype() == DType::Int32) &&
                  split->rank() <= 1,
              "'split' must be an int32 or int64 scalar or vector, got " + value_str(*split));
    const std::vector<int64_t> v = split->to_int64_vector();
    if (split->rank() == 0) {
      ctx.check(v[0] > 0, "'split' must be positive, got " + std::to_string(v[0]));
      for (int64_t start = 0; start < dim; start += v[0]) lengths.push_back(std::min(v[0], dim - start));
    } else {
      int64_t sum = 0;
      for (int64_t len : v) {
        ctx.check(len >= 0, "'split' lengths must not be negative, got " + std::to_string(len));
        sum = size_add(sum, len, "the sum of 'split'");
      }
      ctx.check(sum == dim, "'split' lengths sum to " + std::to_string(sum) + " but axis " + std::to_string(axis) +
                                " has " + std::to_string(dim));
      lengths = v;
    }
  } else {
    lengths.assign(static_cast<size_t>(dim), 1);
    squeeze = ctx.node.attr_int("keepdims", 1) == 0;
  }
  const std::vector<int64_t> strides = movement::dense_strides(input.shape());
  std::vector<Tensor> items;
  items.reserve(lengths.size());
  int64_t start = 0;
  for (int64_t len : lengths) {
    Shape shape = input.shape();
    shape[axis] = len;
    Tensor chunk = movement::strided_view_or_copy(input, start * strides[axis], shape, strides);
    if (squeeze) {
      shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
      chunk = chunk.reshaped(shape);
    }
    items.push_back(std::move(chunk));
    start += len;
  }
  ctx.outputs[0] = Tensor::sequence(std::move(items), input.dtype());
}

// Concatenates the elements along `axis`, or stacks them along a new axis `axis` when new_axis = 1.
void concat_from_sequence(KernelContext& ctx) {
  const Tensor& s = sequence_input(ctx, 0);
  ctx.check(ctx.node.has_attr("axis"), "attribute 'axis' is required");
  const bool new_axis = ctx.node.attr_int("new_axis", 0) != 0;
  const std::vector<Tensor>& items = s.items();
  ctx.check(!items.empty(), "cannot concatenate an empty sequence");
  const Tensor& first = items[0];
  const int64_t out_rank = static_cast<int64_t>(first.rank()) + (new_axis ? 1 : 0);
  ctx.check(out_rank >= 1, "cannot concatenate scalars (new_axis = 0)");
  const size_t axis = static_cast<size_t>(movement::normalize_axis(ctx, ctx.node.attr_int("axis", 0), out_rank));
  // Each element as the output sees it: a 1 inserted at `axis` when stacking.
  auto part_shape = [&](const Tensor& t) {
    Shape shape = t.shape();
    if (new_axis) shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    return shape;
  };
  Shape out_shape = part_shape(first);
  out_shape[axis] = 0;
  for (size_t k = 0; k < items.size(); ++k) {
    const Tensor& t = items[k];
    const Shape shape = part_shape(t);
    bool same = t.dtype() == first.dtype() && shape.size() == out_shape.size();
    for (size_t d = 0; same && d < shape.size(); ++d) same = d == axis || shape[d] == out_shape[d];
    ctx.check(same, "element " + std::to_string(k) + " is " + value_str(t) + ", element 0 is " + value_str(first) +
                        (new_axis ? " (stacked elements must have one shape)" : " (they may differ only along the axis)"));
    out_shape[axis] = size_add(out_shape[axis], shape[axis], "the output's dimension");
  }
  Tensor out(first.dtype(), out_shape);
  const std::vector<int64_t> dst_strides = movement::dense_strides(out_shape);
  const size_t esize = dtype_size(first.dtype());
  int64_t at = 0;
  for (const Tensor& t : items) {
    const Shape shape = part_shape(t);
    movement::strided_copy(t.raw(), 0, movement::dense_strides(shape), out.mutable_raw(), at * dst_strides[axis],
                           dst_strides, shape, esize);
    at += shape[axis];
  }
  ctx.outputs[0] = std::move(out);
}

// ---- SequenceMap -------------------------------------------------------------------------------

[[noreturn]] void node_fail(const ir::Node& node, const std::string& message) {
  throw Error("node '" + node.name + "' (" + node.op_type + "): " + message);
}

void check_sequence_map(const ir::Node& node) {
  const ir::Attribute* a = node.attr("body");
  if (!a || !a->g) node_fail(node, "graph attribute 'body' is missing");
  const ir::Graph& body = *a->g;
  if (node.inputs.empty() || node.inputs[0] < 0) node_fail(node, "needs input 'input_sequence'");
  if (body.inputs.size() != node.inputs.size())
    node_fail(node, "body declares " + std::to_string(body.inputs.size()) + " input(s) but the node has " +
                        std::to_string(node.inputs.size()));
  if (body.outputs.size() != node.outputs.size())
    node_fail(node, "body declares " + std::to_string(body.outputs.size()) + " output(s) but the node has " +
                        std::to_string(node.outputs.size()));
}

// Output j holds the body's output j of every element: the body reads element i of the input
// sequence, and element i of each additional input that is a sequence (a tensor as it is).
void sequence_map(KernelContext& ctx) {
  const ir::Graph& body = ctx.graph_attr("body");
  const Tensor& s = sequence_input(ctx, 0);
  const size_t n = s.items().size();
  for (size_t j = 1; j < ctx.input_count(); ++j) {
    const Tensor& extra = ctx.required(j);
    ctx.check(extra.kind() != ValueKind::Optional, "input " + std::to_string(j) + " must be a tensor or a sequence");
    if (extra.kind() == ValueKind::Sequence)
      ctx.check(extra.items().size() == n, "input " + std::to_string(j) + " is a sequence of " +
                                               std::to_string(extra.items().size()) + " tensor(s), 'input_sequence' of " +
                                               std::to_string(n));
  }
  std::vector<std::vector<Tensor>> outs(ctx.outputs.size());
  for (size_t i = 0; i < n; ++i) {
    std::vector<Tensor> in;
    in.reserve(ctx.input_count());
    for (size_t j = 0; j < ctx.input_count(); ++j) {
      const Tensor& x = *ctx.input(j);
      in.push_back(x.kind() == ValueKind::Sequence ? x.items()[i] : x);
    }
    std::vector<Tensor> out = ctx.run_subgraph(body, in);
    for (size_t k = 0; k < out.size(); ++k) {
      ctx.check(out[k].is_dense(), "body output " + std::to_string(k) + " is a " + value_str(out[k]) +
                                       "; the elements of a sequence are tensors");
      outs[k].push_back(std::move(out[k]));
    }
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    const ir::ValueInfo& declared = body.value(body.outputs[k]).info;
    const DType elem = !outs[k].empty() ? outs[k][0].dtype() : declared.dtype;
    ctx.outputs[k] = sequence_of(ctx, std::move(outs[k]), elem);
  }
}

// A sequence has no static shape; SequenceLength gives one int64.
void no_static_shape(const shape::In&, shape::Outs&) {}
void int64_scalar(const shape::In&, shape::Outs& o) { o[0] = shape::ranked(DType::Int64, Shape{}); }

}  // namespace

void register_sequence(OpRegistry& r) {
  r.add("", "SequenceEmpty", sequence_empty).takes_values().rule(no_static_shape).meta("", "");
  r.add("", "SequenceConstruct", sequence_construct).takes_values().rule(no_static_shape).meta("", "inputs...");
  r.add("", "SequenceAt", sequence_at).takes_values().rule(no_static_shape).meta("", "input_sequence position");
  r.add("", "SequenceInsert", sequence_insert)
      .takes_values()
      .rule(no_static_shape)
      .meta("", "input_sequence tensor position?");
  r.add("", "SequenceErase", sequence_erase).takes_values().rule(no_static_shape).meta("", "input_sequence position?");
  r.add("", "SequenceLength", sequence_length).takes_values().rule(int64_scalar).meta("", "input_sequence");
  r.add("", "SplitToSequence", split_to_sequence).takes_values().rule(no_static_shape).meta("", "input split?");
  r.add("", "ConcatFromSequence", concat_from_sequence).takes_values().rule(no_static_shape).meta("", "input_sequence");
  r.add("", "SequenceMap", sequence_map)
      .takes_values()
      .check(check_sequence_map)
      .rule(no_static_shape)
      .meta("", "input_sequence additional_inputs...");
}

}  // namespace ptq::exec
