// Detector heads: RoiAlign and NonMaxSuppression, computed as onnxruntime does (float32).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/conv_common.h"  // is_float_like

namespace ptq::exec {
namespace {

// One bilinear sample of a [H, W] plane at (y, x): the four taps and their weights. Samples more
// than one pixel outside the plane weigh nothing; closer ones are clamped to the edge.
struct BilinearTap {
  int64_t at[4] = {0, 0, 0, 0};
  float w[4] = {0, 0, 0, 0};
};

BilinearTap bilinear_tap(int64_t h, int64_t wd, float y, float x) {
  BilinearTap t;
  if (!(y >= -1.0f && y <= static_cast<float>(h) && x >= -1.0f && x <= static_cast<float>(wd))) return t;  // NaN too
  y = std::max(y, 0.0f);
  x = std::max(x, 0.0f);
  auto y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x);
  int64_t y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<float>(y0);
  }
  if (x0 >= wd - 1) {
    x0 = x1 = wd - 1;
    x = static_cast<float>(x0);
  }
  const float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0);
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  t.at[0] = y0 * wd + x0;
  t.at[1] = y0 * wd + x1;
  t.at[2] = y1 * wd + x0;
  t.at[3] = y1 * wd + x1;
  t.w[0] = hy * hx;
  t.w[1] = hy * lx;
  t.w[2] = ly * hx;
  t.w[3] = ly * lx;
  return t;
}

// RoiAlign (opset 10/16): each ROI [x1, y1, x2, y2] (scaled by spatial_scale; shifted by half a
// pixel with coordinate_transformation_mode "half_pixel", the opset 16 default) is split into
// output_height x output_width bins, each averaged (mode "avg") over a sampling_ratio^2 grid of
// bilinear samples (adaptive ceil(roi / output) when sampling_ratio is 0). Mode "max" follows
// onnxruntime: the largest weighted tap w_i * v_i over the bin's samples.
void roi_align(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const Tensor& rois0 = ctx.required(1);
  const Tensor& batch_t = ctx.required(2);
  ctx.check(ops::is_float_like(x0.dtype()) && ops::is_float_like(rois0.dtype()), "unsupported input dtype " +
                                                                           dtype_name(x0.dtype()));
  ctx.check(x0.rank() == 4, "X must be [N, C, H, W], got " + shape_str(x0.shape()));
  ctx.check(rois0.rank() == 2 && rois0.dim(1) == 4, "rois must be [num_rois, 4], got " + shape_str(rois0.shape()));
  ctx.check((batch_t.dtype() == DType::Int64 || batch_t.dtype() == DType::Int32) && batch_t.rank() == 1 &&
                batch_t.dim(0) == rois0.dim(0),
            "batch_indices must be a 1-D int64 tensor of num_rois = " + std::to_string(rois0.dim(0)) + " entries");
  const std::string mode = ctx.node.attr_string("mode", "avg");
  ctx.check(mode == "avg" || mode == "max", "unsupported mode '" + mode + "'");
  const std::string ctm = ctx.node.attr_string("coordinate_transformation_mode", ctx.opset() >= 16 ? "half_pixel"
                                                                                                   : "output_half_pixel");
  ctx.check(ctm == "half_pixel" || ctm == "output_half_pixel",
            "unsupported coordinate_transformation_mode '" + ctm + "'");
  const bool half_pixel = ctm == "half_pixel";
  const int64_t oh = ctx.node.attr_int("output_height", 1), ow = ctx.node.attr_int("output_width", 1);
  const int64_t sampling = ctx.node.attr_int("sampling_ratio", 0);
  const float scale = ctx.node.attr_float("spatial_scale", 1.0f);
  ctx.check(oh >= 1 && ow >= 1, "output_height and output_width must be >= 1");
  ctx.check(sampling >= 0, "sampling_ratio must be >= 0, got " + std::to_string(sampling));

  const Tensor x = x0.to_float(), rois = rois0.to_float();
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t num_rois = rois.dim(0);
  const std::vector<int64_t> batch = batch_t.to_int64_vector();
  ctx.check(num_rois == 0 || (h > 0 && w > 0), "X has an empty spatial extent " + shape_str(x.shape()));
  Tensor y(DType::Float, {num_rois, c, oh, ow});
  float* out = y.mutable_data<float>();
  const float* r = rois.data<float>();
  const float offset = half_pixel ? 0.5f : 0.0f;
  for (int64_t i = 0; i < num_rois; ++i) {
    ctx.check(batch[static_cast<size_t>(i)] >= 0 && batch[static_cast<size_t>(i)] < n,
              "batch index " + std::to_string(batch[static_cast<size_t>(i)]) + " is out of range for N = " +
                  std::to_string(n));
    const float sx = r[i * 4] * scale - offset, sy = r[i * 4 + 1] * scale - offset;
    const float ex = r[i * 4 + 2] * scale - offset, ey = r[i * 4 + 3] * scale - offset;
    float rw = ex - sx, rh = ey - sy;
    if (!half_pixel) {  // the legacy mode forces ROIs of at least one pixel
      rw = std::max(rw, 1.0f);
      rh = std::max(rh, 1.0f);
    }
    const float bh = rh / static_cast<float>(oh), bw = rw / static_cast<float>(ow);
    const float grid_hf = sampling > 0 ? static_cast<float>(sampling) : std::ceil(rh / static_cast<float>(oh));
    const float grid_wf = sampling > 0 ? static_cast<float>(sampling) : std::ceil(rw / static_cast<float>(ow));
    ctx.check(std::isfinite(grid_hf) && std::isfinite(grid_wf) && grid_hf < 1e6f && grid_wf < 1e6f,
              "ROI " + std::to_string(i) + " needs an unbounded sampling grid");
    const auto gh = static_cast<int64_t>(std::max(grid_hf, 0.0f)), gw = static_cast<int64_t>(std::max(grid_wf, 0.0f));
    const float count = static_cast<float>(std::max<int64_t>(gh * gw, 1));
    // The sampling taps are the same for every channel.
    std::vector<BilinearTap> taps;
    taps.reserve(static_cast<size_t>(oh * ow * gh * gw));
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw)
        for (int64_t iy = 0; iy < gh; ++iy) {
          const float yy = sy + static_cast<float>(ph) * bh +
                           (static_cast<float>(iy) + 0.5f) * bh / static_cast<float>(gh);
          for (int64_t ix = 0; ix < gw; ++ix) {
            const float xx = sx + static_cast<float>(pw) * bw +
                             (static_cast<float>(ix) + 0.5f) * bw / static_cast<float>(gw);
            taps.push_back(bilinear_tap(h, w, yy, xx));
          }
        }
    const int64_t per_bin = gh * gw;
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* plane = x.data<float>() + (batch[static_cast<size_t>(i)] * c + ch) * h * w;
      float* o = out + (i * c + ch) * oh * ow;
      for (int64_t bin = 0; bin < oh * ow; ++bin) {
        float acc = 0.0f;
        bool first = true;
        for (int64_t k = 0; k < per_bin; ++k) {
          const BilinearTap& t = taps[static_cast<size_t>(bin * per_bin + k)];
          if (mode == "avg") {
            acc += t.w[0] * plane[t.at[0]] + t.w[1] * plane[t.at[1]] + t.w[2] * plane[t.at[2]] + t.w[3] * plane[t.at[3]];
          } else {
            const float m = std::max(std::max(t.w[0] * plane[t.at[0]], t.w[1] * plane[t.at[1]]),
                                     std::max(t.w[2] * plane[t.at[2]], t.w[3] * plane[t.at[3]]));
            acc = first ? m : std::max(acc, m);
            first = false;
          }
        }
        o[bin] = mode == "avg" ? acc / count : acc;
      }
    }
  }
  ctx.outputs[0] = x0.dtype() == DType::Float ? y : cast_tensor(y, x0.dtype());
}

// A box as (y1, x1, y2, x2) with y1 <= y2 and x1 <= x2.
struct Box {
  float y1, x1, y2, x2;
};

Box read_box(const float* b, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// True when the IoU of a and b exceeds the threshold (boxes without overlap never suppress).
bool suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return false;
  const float inter = ih * iw;
  const float uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
  if (uni <= 0) return false;
  return inter / uni > iou_threshold;
}

// NonMaxSuppression (opset 10/11): per batch and class, boxes scoring above score_threshold (when
// given) are taken greedily by descending score (ties: lower box index first), dropping any whose
// IoU with a kept box exceeds iou_threshold, up to max_output_boxes_per_class (0 or absent: none).
// Output: [num_selected, 3] int64 rows (batch, class, box).
void non_max_suppression(KernelContext& ctx) {
  const Tensor& boxes0 = ctx.required(0);
  const Tensor& scores0 = ctx.required(1);
  ctx.check(ops::is_float_like(boxes0.dtype()) && ops::is_float_like(scores0.dtype()),
            "unsupported boxes/scores dtype " + dtype_name(boxes0.dtype()));
  ctx.check(boxes0.rank() == 3 && boxes0.dim(2) == 4, "boxes must be [batches, boxes, 4], got " +
                                                          shape_str(boxes0.shape()));
  ctx.check(scores0.rank() == 3 && scores0.dim(0) == boxes0.dim(0) && scores0.dim(2) == boxes0.dim(1),
            "scores " + shape_str(scores0.shape()) + " do not match boxes " + shape_str(boxes0.shape()));
  const int64_t cpb = ctx.node.attr_int("center_point_box", 0);
  ctx.check(cpb == 0 || cpb == 1, "attribute 'center_point_box' must be 0 or 1, got " + std::to_string(cpb));
  auto scalar = [&](size_t i, const char* what) -> const Tensor* {
    const Tensor* t = ctx.input(i);
    if (t) ctx.check(t->numel() == 1, std::string(what) + " must hold one value, got shape " + shape_str(t->shape()));
    return t;
  };
  const Tensor* max_t = scalar(2, "max_output_boxes_per_class");
  const Tensor* iou_t = scalar(3, "iou_threshold");
  const Tensor* score_t = scalar(4, "score_threshold");
  if (max_t) ctx.check(max_t->dtype() == DType::Int64, "max_output_boxes_per_class must be int64");
  const int64_t max_out = max_t ? std::max<int64_t>(max_t->data<int64_t>()[0], 0) : 0;
  const float iou = iou_t ? static_cast<float>(iou_t->get_as_double(0)) : 0.0f;
  ctx.check(iou >= 0.0f && iou <= 1.0f, "iou_threshold must be in [0, 1], got " + std::to_string(iou));
  const Tensor boxes = boxes0.to_float(), scores = scores0.to_float();
  const int64_t batches = boxes.dim(0), count = boxes.dim(1), classes = scores.dim(1);
  std::vector<int64_t> rows;
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches && max_out > 0; ++b) {
    std::vector<Box> all(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) all[static_cast<size_t>(k)] = read_box(boxes.data<float>() + (b * count + k) * 4, cpb == 1);
    for (int64_t cl = 0; cl < classes; ++cl) {
      const float* s = scores.data<float>() + (b * classes + cl) * count;
      order.clear();
      for (int64_t k = 0; k < count; ++k)
        if (!score_t || s[k] > static_cast<float>(score_t->get_as_double(0))) order.push_back(k);
      std::stable_sort(order.begin(), order.end(), [s](int64_t p, int64_t q) { return s[p] > s[q]; });
      kept.clear();
      for (int64_t k : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        const Box& candidate = all[static_cast<size_t>(k)];
        if (std::any_of(kept.begin(), kept.end(), [&](const Box& other) { return suppresses(candidate, other, iou); }))
          continue;
        kept.push_back(candidate);
        rows.insert(rows.end(), {b, cl, k});
      }
    }
  }
  ctx.outputs[0] = Tensor::from_int64s({static_cast<int64_t>(rows.size() / 3), 3}, rows);
}

}  // namespace

void register_detection(OpRegistry& r) {
  r.add("", "RoiAlign", &roi_align).meta("pool", "X rois batch_indices");
  r.add("", "NonMaxSuppression", &non_max_suppression)
      .meta("", "boxes scores max_output_boxes_per_class? iou_threshold? score_threshold?");
  r.add("", "MaxRoiPool", nullptr).meta("pool", "X rois");  // shown by the viewers, not executed
}

}  // namespace ptq::exec
