// NonMaxSuppression and RoiAlign: hand-worked boxes and bins, and the inputs they reject.
#include <string>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::attr_string;
using test::expect_tensor_near;
using test::run_op;
using test::floats;
using test::int64s;

TEST(Detection, NonMaxSuppressionHandWorked) {
  // Boxes [y1, x1, y2, x2]: 0 and 1 overlap with IoU 81/100 = 0.81; 2 is apart; box 3 is box 2
  // given with flipped corners.
  const Tensor boxes = floats({1, 4, 4}, {0, 0, 10, 10, 1, 1, 10, 10, 20, 20, 30, 30, 30, 30, 20, 20});
  const Tensor scores = floats({1, 1, 4}, {0.9f, 0.95f, 0.5f, 0.4f});
  // IoU threshold 0.5: box 1 (best) suppresses 0; box 2 suppresses 3 (identical after flipping).
  EXPECT_EQ(run_op("NonMaxSuppression", {boxes, scores, int64s({1}, {10}), floats({1}, {0.5f})})[0].to_int64_vector(),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // Threshold 0.85 keeps box 0 too; score threshold 0.45 drops box 3 before suppression.
  EXPECT_EQ(run_op("NonMaxSuppression", {boxes, scores, int64s({1}, {10}), floats({1}, {0.85f}), floats({1}, {0.45f})})[0]
                .to_int64_vector(),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 2}));
  // At most 1 per class; max_output_boxes_per_class absent or 0 selects nothing.
  EXPECT_EQ(run_op("NonMaxSuppression", {boxes, scores, int64s({1}, {1}), floats({1}, {0.5f})})[0].to_int64_vector(),
            (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(run_op("NonMaxSuppression", {boxes, scores})[0].shape(), (Shape{0, 3}));
  EXPECT_THROW(run_op("NonMaxSuppression", {boxes, scores, int64s({1}, {1}), floats({1}, {1.5f})}), Error);
  EXPECT_THROW(run_op("NonMaxSuppression", {boxes, floats({1, 1, 3}, {1, 2, 3})}), Error);
}

TEST(Detection, RoiAlignHandWorked) {
  // A 4x4 ramp x[i, j] = 4i + j is linear, so every bilinear sample is exact: the average over a
  // bin is the ramp at the bin's centre. ROI [0, 0, 2, 2] (half_pixel: shifted by -0.5) with a
  // 1x1 output has its centre at (0.5, 0.5) -> 4 * 0.5 + 0.5 = 2.5.
  std::vector<float> ramp(16);
  for (int i = 0; i < 16; ++i) ramp[static_cast<size_t>(i)] = static_cast<float>(i);
  const Tensor x = floats({1, 1, 4, 4}, ramp);
  const Tensor rois = floats({1, 4}, {0, 0, 2, 2});
  expect_tensor_near(run_op("RoiAlign", {x, rois, int64s({1}, {0})}, {attr_int("sampling_ratio", 2)}, 1, 16)[0],
                     {1, 1, 1, 1}, {2.5f});
  // output_half_pixel (opset 10): no shift, centre (1, 1) -> 5; 2x2 bins of [0, 2]: centres 0.5, 1.5.
  expect_tensor_near(run_op("RoiAlign", {x, rois, int64s({1}, {0})},
                            {attr_int("output_height", 2), attr_int("output_width", 2), attr_int("sampling_ratio", 2)},
                            1, 10)[0],
                     {1, 1, 2, 2}, {2.5f, 3.5f, 6.5f, 7.5f});
  EXPECT_THROW(run_op("RoiAlign", {x, rois, int64s({1}, {1})}, {}, 1, 16), Error);  // batch index 1 of N = 1
  EXPECT_THROW(run_op("RoiAlign", {x, rois, int64s({1}, {0})}, {attr_string("mode", "median")}, 1, 16), Error);
}

TEST(Detection, GridSampleIdentityGridAndPadding) {
  // align_corners 1: grid -1 and 1 hit the corner pixel centres, so an identity grid copies X.
  const Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor grid = floats({1, 2, 2, 2}, {-1, -1, 1, -1, -1, 1, 1, 1});
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    expect_tensor_near(run_op("GridSample", {x, grid}, {attr_int("align_corners", 1), attr_string("mode", mode)}, 1,
                              16)[0],
                       {1, 1, 2, 2}, {1, 2, 3, 4});
  }
  // A point far to the right: zeros padding reads 0, border the right column's interpolation
  // (y = 0 -> between rows: (2 + 4) / 2 = 3), reflection folds back inside.
  const Tensor far = floats({1, 1, 1, 2}, {5, 0});
  expect_tensor_near(run_op("GridSample", {x, far}, {attr_int("align_corners", 1)}, 1, 16)[0], {1, 1, 1, 1}, {0});
  expect_tensor_near(run_op("GridSample", {x, far}, {attr_int("align_corners", 1), attr_string("padding_mode", "border")},
                            1, 16)[0],
                     {1, 1, 1, 1}, {3});
  // Reflection with align_corners 1 over [0, 1]: x = (5 + 1) / 2 = 3 folds back to 1.
  expect_tensor_near(run_op("GridSample", {x, far},
                            {attr_int("align_corners", 1), attr_string("padding_mode", "reflection")}, 1, 16)[0],
                     {1, 1, 1, 1}, {3});
  EXPECT_THROW(run_op("GridSample", {x, grid}, {attr_string("mode", "linear")}, 1, 16), Error);  // opset 20 name
  EXPECT_THROW(run_op("GridSample", {x, grid}, {attr_string("padding_mode", "wrap")}, 1, 16), Error);
  EXPECT_THROW(run_op("GridSample", {floats({1, 2}, {1, 2}), grid}, {}, 1, 16), Error);
}

}  // namespace
}  // namespace ptq
