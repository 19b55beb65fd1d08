#include "ops/simd.h"

namespace ptq::ops::simd {

const ExpConstants& exp_constants() {
  static const ExpConstants k{splat(88.3762626647950f),  splat(-87.3365478515625f), splat(1.44269504088896341f),
                              splat(12582912.0f),        splat(0.693359375f),        splat(-2.12194440e-4f),
                              splat(1.9875691500e-4f),   splat(1.3981999507e-3f),    splat(8.3334519073e-3f),
                              splat(4.1665795894e-2f),   splat(1.6666665459e-1f),    splat(5.0000001201e-1f),
                              splat(1.0f)};
  return k;
}

}  // namespace ptq::ops::simd
