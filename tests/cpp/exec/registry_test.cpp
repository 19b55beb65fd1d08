// The op registry: one entry per (domain, op, opset range) with kernel, shape rule and metadata.
#include "exec/registry.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

using namespace ptq;
using exec::OpDef;
using exec::OpRegistry;

namespace {

std::vector<std::string> input_names(const OpDef* def) {
  std::vector<std::string> names;
  for (const auto& in : def->inputs) names.push_back(in.name);
  return names;
}

TEST(OpRegistry, LookupTakesTheOpsetOfTheDomain) {
  const OpRegistry& r = OpRegistry::global();
  // Squeeze's axes became an input in opset 13.
  const OpDef* old_squeeze = r.find_op("", "Squeeze", 12);
  const OpDef* new_squeeze = r.find_op("", "Squeeze", 13);
  ASSERT_NE(old_squeeze, nullptr);
  ASSERT_NE(new_squeeze, nullptr);
  EXPECT_EQ(input_names(old_squeeze), std::vector<std::string>({"data"}));
  EXPECT_EQ(input_names(new_squeeze), std::vector<std::string>({"data", "axes"}));
  EXPECT_TRUE(new_squeeze->inputs[1].optional);
  // Opset 0 (the domain not imported) reads as 1; no opset means the newest.
  EXPECT_EQ(r.find_op("", "Squeeze", 0), old_squeeze);
  EXPECT_EQ(r.find_op("", "Squeeze"), new_squeeze);
  // "ai.onnx" is the default domain; Hz ops are found with an empty domain too.
  EXPECT_EQ(r.find_op("ai.onnx", "Squeeze", 13), new_squeeze);
  EXPECT_EQ(r.find_op("", "HzCalibration", 1), r.find_op("horizon", "HzCalibration", 1));
  EXPECT_EQ(r.find_op("", "NoSuchOp", 13), nullptr);
}

TEST(OpRegistry, EntriesCoverEveryOpsetOnceFromOne) {
  std::map<std::string, std::vector<const OpDef*>> by_op;
  for (const OpDef* d : OpRegistry::global().entries()) by_op[d->domain + ":" + d->op_type].push_back(d);
  ASSERT_FALSE(by_op.empty());
  for (const auto& [name, defs] : by_op) {
    // entries() sorts by first opset: the ranges follow each other from 1 to the newest.
    int next = 1;
    for (const OpDef* d : defs) {
      EXPECT_EQ(d->since, next) << name;
      EXPECT_LE(d->since, d->until) << name;
      next = d->until == exec::kLatestOpset ? -1 : d->until + 1;
    }
    EXPECT_EQ(next, -1) << name << " does not reach the newest opset";
  }
}

TEST(OpRegistry, MetadataOfWhatTheViewersShow) {
  const OpRegistry& r = OpRegistry::global();
  const OpDef* conv = r.find_op("", "Conv", 17);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->category, "layer");
  EXPECT_EQ(input_names(conv), std::vector<std::string>({"X", "W", "B"}));
  EXPECT_TRUE(conv->inputs[2].optional);
  EXPECT_TRUE(conv->shape_rule != nullptr);
  const OpDef* concat = r.find_op("", "Concat", 13);
  ASSERT_NE(concat, nullptr);
  ASSERT_EQ(concat->inputs.size(), 1u);
  EXPECT_TRUE(concat->inputs[0].variadic);
  const OpDef* pre = r.find_op("horizon", "HzPreprocess", 1);
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->category, "normalization");
  EXPECT_EQ(input_names(pre), std::vector<std::string>({"input", "weight", "bias"}));
  // Known to the viewers but not executed: no kernel, so the executor reports it unsupported.
  const OpDef* lut = r.find_op("horizon", "HzLut", 1);
  ASSERT_NE(lut, nullptr);
  EXPECT_EQ(lut->kernel, nullptr);
  EXPECT_EQ(r.find("horizon", "HzLut", 1), nullptr);
  for (const std::string& name : r.op_types()) EXPECT_NE(name, "horizon:HzLut");
}

TEST(OpRegistry, EveryShapeRuleBelongsToAnExecutedOp) {
  for (const OpDef* d : OpRegistry::global().entries()) {
    if (d->shape_rule) EXPECT_NE(d->kernel, nullptr) << d->domain << ":" << d->op_type;
  }
}

}  // namespace
