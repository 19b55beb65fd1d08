// Linear algebra: Det, the determinant of each [M, M] matrix in the last two dims, by LU
// decomposition with partial pivoting in double.
#include <cmath>
#include <utility>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"

namespace ptq::exec {
namespace {

double determinant(std::vector<double>& a, int64_t m) {
  double det = 1.0;
  for (int64_t c = 0; c < m; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::fabs(a[static_cast<size_t>(r * m + c)]) > std::fabs(a[static_cast<size_t>(pivot * m + c)])) pivot = r;
    const double p = a[static_cast<size_t>(pivot * m + c)];
    if (p == 0.0) return 0.0;
    if (pivot != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[static_cast<size_t>(c * m + k)], a[static_cast<size_t>(pivot * m + k)]);
      det = -det;
    }
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[static_cast<size_t>(r * m + c)] / p;
      for (int64_t k = c; k < m; ++k) a[static_cast<size_t>(r * m + k)] -= f * a[static_cast<size_t>(c * m + k)];
    }
  }
  return det;
}

void det(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const DType dt = x0.dtype();
  ctx.check(dt == DType::Float || dt == DType::Double || dt == DType::Float16 || dt == DType::BFloat16,
            "unsupported input dtype " + dtype_name(dt));
  ctx.check(x0.rank() >= 2 && x0.dim(x0.rank() - 1) == x0.dim(x0.rank() - 2),
            "input must be [..., M, M], got " + shape_str(x0.shape()));
  const Tensor x = cast_tensor(x0, DType::Double);
  const int64_t m = x.dim(x.rank() - 1);
  const Shape out_shape(x.shape().begin(), x.shape().end() - 2);
  Tensor y(DType::Double, out_shape);
  const int64_t count = shape_numel(out_shape);
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t i = 0; i < count; ++i) {
    a.assign(x.data<double>() + i * m * m, x.data<double>() + (i + 1) * m * m);
    y.mutable_data<double>()[i] = determinant(a, m);
  }
  ctx.outputs[0] = cast_tensor(y, dt);
}

}  // namespace

void register_linalg(OpRegistry& r) { r.add("", "Det", &det).meta("", "X"); }

}  // namespace ptq::exec
