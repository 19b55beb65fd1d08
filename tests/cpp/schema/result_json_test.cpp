#include "schema/result_json.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ptq;

TEST(ResultJson, SensitivityTableShape) {
  analysis::SensitivityResult r;
  r.node_type = "activation";
  r.metrics = {"cosine-similarity", "sqnr"};
  r.rows.push_back({"21", {0.5f, INFINITY}, "Conv_2", true, 3.12345, "int8"});
  r.rows.push_back({"b_HzCalibration", {0.75f, 12.5f}, "", false, 0.0, "int16"});
  io::JsonWriter w;
  schema::write_sensitivity_table(w, r);
  EXPECT_EQ(w.str(),
            R"({"21":{"node":"Conv_2","threshold":3.12345,"qtype":"int8","cosine-similarity":0.5,"sqnr":"inf"},)"
            R"("b_HzCalibration":{"node":"","threshold":null,"qtype":"int16","cosine-similarity":0.75,"sqnr":12.5}})");
}
