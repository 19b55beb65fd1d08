// Einsum: the Einstein summation of the ONNX spec (numpy.einsum's subscript language) — explicit
// ("ij,jk->ik") and implicit output (labels seen once, alphabetical, after the broadcast "..." dims),
// repeated labels within an operand (diagonals), "..." broadcasting across operands. Computed by
// one loop over every label's range; float inputs accumulate in double, integers in int64 (wrapping),
// then the result is cast to the input dtype.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"

namespace ptq::exec {
namespace {

// Labels are letters (their char value) or, for the dims covered by "...", kEllipsisLabel + k where
// k counts the broadcast dims from the left of the widest "..." (right-aligned like numpy).
constexpr int kEllipsisLabel = 1000;

struct Term {
  std::vector<int> labels;  // one per dim after expanding "..."
  bool has_ellipsis = false;
};

std::string strip_spaces(const std::string& s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

// Parses one subscript term ("b...ij") for an operand of `rank` dims (rank < 0: output term whose
// "..." covers `ellipsis_rank` dims).
Term parse_term(const KernelContext& ctx, const std::string& text, int64_t rank, int64_t ellipsis_rank) {
  Term t;
  std::vector<int> letters_before, letters_after;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "...") == 0) {
      ctx.check(!t.has_ellipsis, "equation term '" + text + "' has more than one '...'");
      t.has_ellipsis = true;
      i += 3;
      continue;
    }
    const char c = text[i++];
    ctx.check(std::isalpha(static_cast<unsigned char>(c)) != 0,
              std::string("equation has an invalid character '") + c + "' in term '" + text + "'");
    (t.has_ellipsis ? letters_after : letters_before).push_back(c);
  }
  const auto explicit_count = static_cast<int64_t>(letters_before.size() + letters_after.size());
  int64_t covered = 0;
  if (rank >= 0) {
    ctx.check(t.has_ellipsis ? explicit_count <= rank : explicit_count == rank,
              "equation term '" + text + "' does not match an input of rank " + std::to_string(rank));
    covered = rank - explicit_count;
  } else {
    covered = t.has_ellipsis ? ellipsis_rank : 0;
  }
  t.labels = letters_before;
  for (int64_t k = 0; k < covered; ++k) t.labels.push_back(kEllipsisLabel + static_cast<int>(ellipsis_rank - covered + k));
  t.labels.insert(t.labels.end(), letters_after.begin(), letters_after.end());
  return t;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

template <class A>
void accumulate(const std::vector<std::vector<A>>& operands, const std::vector<std::vector<int64_t>>& label_strides,
                const std::vector<int64_t>& sizes, const std::vector<int64_t>& out_strides, std::vector<A>& out) {
  const size_t labels = sizes.size();
  for (int64_t s : sizes)
    if (s == 0) return;  // nothing to sum; the output stays zero
  std::vector<int64_t> pos(labels, 0), off(operands.size(), 0);
  int64_t out_off = 0;
  while (true) {
    A prod = A(1);
    for (size_t k = 0; k < operands.size(); ++k) {
      const A v = operands[k][static_cast<size_t>(off[k])];
      if constexpr (std::is_integral_v<A>) prod = static_cast<A>(static_cast<uint64_t>(prod) * static_cast<uint64_t>(v));
      else prod *= v;
    }
    A& o = out[static_cast<size_t>(out_off)];
    if constexpr (std::is_integral_v<A>) o = static_cast<A>(static_cast<uint64_t>(o) + static_cast<uint64_t>(prod));
    else o += prod;
    size_t d = labels;
    while (d-- > 0) {
      if (++pos[d] < sizes[d]) {
        for (size_t k = 0; k < operands.size(); ++k) off[k] += label_strides[k][d];
        out_off += out_strides[d];
        break;
      }
      for (size_t k = 0; k < operands.size(); ++k) off[k] -= label_strides[k][d] * (sizes[d] - 1);
      out_off -= out_strides[d] * (sizes[d] - 1);
      pos[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

void einsum(KernelContext& ctx) {
  ctx.check(ctx.node.has_attr("equation"), "attribute 'equation' is required");
  const std::string equation = strip_spaces(ctx.node.attr_string("equation", ""));
  ctx.check(ctx.input_count() >= 1, "needs at least one input");
  const DType dtype = ctx.required(0).dtype();
  const bool floats = dtype == DType::Float || dtype == DType::Double || dtype == DType::Float16 ||
                      dtype == DType::BFloat16;
  ctx.check(floats || dtype == DType::Int32 || dtype == DType::Int64, "unsupported input dtype " + dtype_name(dtype));

  const size_t arrow = equation.find("->");
  const std::vector<std::string> in_terms = split(equation.substr(0, arrow), ',');
  ctx.check(in_terms.size() == ctx.input_count(), "equation '" + equation + "' has " +
                                                      std::to_string(in_terms.size()) + " input terms for " +
                                                      std::to_string(ctx.input_count()) + " inputs");
  int64_t ellipsis_rank = 0;
  std::vector<const Tensor*> inputs;
  for (size_t k = 0; k < in_terms.size(); ++k) {
    const Tensor& t = ctx.required(k);
    ctx.check(t.dtype() == dtype, "input dtypes differ: " + dtype_name(dtype) + " and " + dtype_name(t.dtype()));
    inputs.push_back(&t);
  }
  // The widest "..." decides how many broadcast dims the output has.
  std::vector<Term> terms;
  for (size_t k = 0; k < in_terms.size(); ++k) {
    const auto rank = static_cast<int64_t>(inputs[k]->rank());
    const Term probe = parse_term(ctx, in_terms[k], rank, rank);  // "..." labels all >= kEllipsisLabel
    int64_t letters = 0;
    for (int l : probe.labels) letters += l < kEllipsisLabel;
    ellipsis_rank = std::max(ellipsis_rank, static_cast<int64_t>(inputs[k]->rank()) - letters);
  }
  for (size_t k = 0; k < in_terms.size(); ++k)
    terms.push_back(parse_term(ctx, in_terms[k], static_cast<int64_t>(inputs[k]->rank()), ellipsis_rank));

  // Label sizes: equal across uses, except that a broadcast ("...") dim of size 1 stretches.
  std::map<int, int64_t> size_of;
  std::map<int, int> count;
  for (size_t k = 0; k < terms.size(); ++k) {
    for (size_t d = 0; d < terms[k].labels.size(); ++d) {
      const int l = terms[k].labels[d];
      const int64_t n = inputs[k]->dim(d);
      ++count[l];
      auto it = size_of.find(l);
      if (it == size_of.end() || (l >= kEllipsisLabel && it->second == 1)) {
        size_of[l] = n;
      } else {
        ctx.check(it->second == n || (l >= kEllipsisLabel && n == 1),
                  "equation '" + equation + "': dims of one label differ (" + std::to_string(it->second) + " and " +
                      std::to_string(n) + ")");
      }
    }
  }
  std::vector<int> out_labels;
  if (arrow == std::string::npos) {
    for (int64_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kEllipsisLabel + static_cast<int>(e));
    for (const auto& [l, c] : count)
      if (l < kEllipsisLabel && c == 1) out_labels.push_back(l);
  } else {
    const std::string out_text = equation.substr(arrow + 2);
    ctx.check(out_text.find("->") == std::string::npos && out_text.find(',') == std::string::npos,
              "equation '" + equation + "' has a malformed output term");
    out_labels = parse_term(ctx, out_text, -1, ellipsis_rank).labels;
    for (size_t i = 0; i < out_labels.size(); ++i) {
      ctx.check(size_of.count(out_labels[i]) != 0,
                "equation '" + equation + "': output label '" + std::string(1, static_cast<char>(out_labels[i])) +
                    "' is not in any input");
      ctx.check(std::count(out_labels.begin(), out_labels.end(), out_labels[i]) == 1,
                "equation '" + equation + "': output repeats a label");
    }
  }
  // Loop order: output labels first (in output order), then the summed ones.
  std::vector<int> all = out_labels;
  for (const auto& [l, n] : size_of)
    if (std::find(all.begin(), all.end(), l) == all.end()) all.push_back(l);
  std::vector<int64_t> sizes;
  for (int l : all) sizes.push_back(size_of[l]);
  Shape out_shape(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(out_labels.size()));
  std::vector<int64_t> out_strides(all.size(), 0);
  for (size_t d = out_labels.size(), s = 1; d-- > 0;) {
    out_strides[d] = static_cast<int64_t>(s);
    s *= static_cast<size_t>(out_shape[d]);
  }
  std::vector<std::vector<int64_t>> label_strides(inputs.size(), std::vector<int64_t>(all.size(), 0));
  for (size_t k = 0; k < inputs.size(); ++k) {
    int64_t stride = 1;
    for (size_t d = terms[k].labels.size(); d-- > 0;) {
      const size_t at = static_cast<size_t>(std::find(all.begin(), all.end(), terms[k].labels[d]) - all.begin());
      if (inputs[k]->dim(d) != 1 || sizes[at] == 1) label_strides[k][at] += stride;  // size-1 "..." dims broadcast
      stride *= inputs[k]->dim(d);
    }
  }
  const DType acc_type = floats ? DType::Double : DType::Int64;
  auto run = [&](auto zero) {
    using A = decltype(zero);
    std::vector<std::vector<A>> operands;
    for (const Tensor* t : inputs) {
      const Tensor c = cast_tensor(*t, acc_type);
      operands.emplace_back(c.data<A>(), c.data<A>() + c.numel());
    }
    std::vector<A> acc(static_cast<size_t>(shape_numel(out_shape)), A(0));
    accumulate(operands, label_strides, sizes, out_strides, acc);
    Tensor out(acc_type, out_shape);
    std::copy(acc.begin(), acc.end(), out.mutable_data<A>());
    ctx.outputs[0] = cast_tensor(out, dtype);
  };
  if (floats) run(0.0);
  else run(int64_t{0});
}

}  // namespace

void register_einsum(OpRegistry& r) { r.add("", "Einsum", &einsum).meta("layer", "Inputs..."); }

}  // namespace ptq::exec
