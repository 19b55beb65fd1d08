// The v1 result sections (docs/result-schema.md) written from hand-built analysis structs.
#include <gtest/gtest.h>

#include <cmath>

#include "schema/result_json.h"

using namespace ptq;

namespace {

template <class F>
std::string in_object(F&& write) {
  io::JsonWriter w;
  w.begin_object();
  write(w);
  w.end_object();
  return w.str();
}

}  // namespace

TEST(ResultSections, AccErrorCurvesFiguresAndKeyCollisions) {
  analysis::AccErrorResult r;
  r.sample = "9.npy";
  r.messages = {"Start ploting accumulate error..."};
  analysis::AccErrorFigure a{"quantize_node_accumulate_err_of_partial_qmodel", "mse", true, {}};
  a.curves.push_back({"default calibrated model", {"t0", "t1"}, {0.5f, INFINITY}});
  a.curves.push_back({"partial_qmodel_0", {"t0", "t1"}, {0.25f, std::nanf("")}});
  analysis::AccErrorFigure b{"non_quantize_node_accumulate_err_of_partial_qmodel", "mse", true, {}};
  b.curves.push_back({"default calibrated model", {"t0", "t1"}, {0.5f, INFINITY}});
  b.curves.push_back({"partial_qmodel_0", {"t0", "t1"}, {0.1f, 1e-7f}});
  r.figures = {a, b};
  const std::string json = in_object([&](io::JsonWriter& w) { schema::write_acc_error_section(w, r); });
  EXPECT_EQ(json,
            R"({"acc_error":{)"
            R"("default calibrated model":{"label":"default calibrated model","x":["t0","t1"],"y":[0.5,"inf"]},)"
            R"("partial_qmodel_0":{"label":"partial_qmodel_0","x":["t0","t1"],"y":[0.25,"nan"]},)"
            R"("non_quantize_node_accumulate_err_of_partial_qmodel/default calibrated model":{"label":"default calibrated model","x":["t0","t1"],"y":[0.5,"inf"]},)"
            R"("non_quantize_node_accumulate_err_of_partial_qmodel/partial_qmodel_0":{"label":"partial_qmodel_0","x":["t0","t1"],"y":[0.1,1e-07]}},)"
            R"("acc_error_figures":[)"
            R"({"prefix":"quantize_node_accumulate_err_of_partial_qmodel","metric":"mse","average_mode":true,)"
            R"("file_name":"average_quantize_node_accumulate_err_of_partial_qmodel_mse.png","curves":["default calibrated model","partial_qmodel_0"]},)"
            R"({"prefix":"non_quantize_node_accumulate_err_of_partial_qmodel","metric":"mse","average_mode":true,)"
            R"("file_name":"average_non_quantize_node_accumulate_err_of_partial_qmodel_mse.png",)"
            R"("curves":["non_quantize_node_accumulate_err_of_partial_qmodel/default calibrated model","non_quantize_node_accumulate_err_of_partial_qmodel/partial_qmodel_0"]}],)"
            R"("acc_error_sample":"9.npy","acc_error_messages":["Start ploting accumulate error..."]})");
}

TEST(ResultSections, DistributionKeysThresholdCosineAndHistograms) {
  analysis::DistributionResult r;
  r.sample = "1.npy";
  analysis::DistributionPlot act;
  act.name = "x_HzCalibration";
  act.kind = "activation";
  act.tensor = "x";
  act.title = "x_HzCalibration activation distribution";
  act.file_name = "activation_x_HzCalibration.png";
  act.has_threshold = true;
  act.threshold = 1.27f;
  act.max_abs = 0.7f;
  act.histograms.push_back({"Input data distribution", "#99ffbb", {-0.5f, 0.1f, 0.7f}, {1, 2}, 3, 1});
  analysis::DistributionPlot out1 = act, out2 = act;
  out1.name = out2.name = "Split_1";
  out1.kind = out2.kind = "node_output";
  out1.tensor = "a";
  out2.tensor = "b";
  out1.has_threshold = out2.has_threshold = false;
  out1.has_cosine = out2.has_cosine = true;
  out1.cosine = 0.99812f;
  out2.cosine = -1.0f;
  out1.histograms.clear();
  out2.histograms.clear();
  r.plots = {act, out1, out2};
  EXPECT_EQ(schema::distribution_keys(r), (std::vector<std::string>{"x_HzCalibration", "Split_1:a", "Split_1:b"}));
  const std::string json = in_object([&](io::JsonWriter& w) { schema::write_distribution_section(w, r); });
  EXPECT_EQ(json,
            R"({"distribution":{"x_HzCalibration":{"name":"x_HzCalibration","kind":"activation","tensor":"x",)"
            R"("title":"x_HzCalibration activation distribution","file_name":"activation_x_HzCalibration.png",)"
            R"("threshold":1.27,"max_abs":0.7,"cosine":null,"histograms":[{"label":"Input data distribution",)"
            R"("color":"#99ffbb","edges":[-0.5,0.1,0.7],"counts":[1,2],"zeros_excluded":3,"non_finite":1}]},)"
            R"("Split_1:a":{"name":"Split_1","kind":"node_output","tensor":"a","title":"x_HzCalibration activation distribution",)"
            R"("file_name":"activation_x_HzCalibration.png","threshold":null,"max_abs":0.7,"cosine":0.99812,"histograms":[]},)"
            R"("Split_1:b":{"name":"Split_1","kind":"node_output","tensor":"b","title":"x_HzCalibration activation distribution",)"
            R"("file_name":"activation_x_HzCalibration.png","threshold":null,"max_abs":0.7,"cosine":-1,"histograms":[]}},)"
            R"("distribution_order":["x_HzCalibration","Split_1:a","Split_1:b"],"distribution_sample":"1.npy"})");
}

TEST(ResultSections, ChannelwiseBoxStatistics) {
  analysis::ChannelwiseResult r;
  r.sample = "0.npy";
  analysis::ChannelwisePlot p;
  p.name = "w_HzCalibration";
  p.kind = "weight";
  p.shape = {2, 3};
  p.axis = 0;
  p.file_name = "w_HzCalibration_boxplot.png";
  p.figure_width = 1;
  analysis::BoxStats b;
  b.count = 3;
  b.mean = 1.0f / 3.0f;
  b.q1 = 0.125;
  b.median = 0.25;
  b.q3 = 0.5;
  b.whisker_low = 0.0;
  b.whisker_high = 0.75;
  b.outlier_count = 1;
  b.outliers = {2.5f};
  analysis::BoxStats nan_channel;
  nan_channel.count = 1;
  nan_channel.mean = nan_channel.q1 = nan_channel.median = nan_channel.q3 = std::nanf("");
  nan_channel.whisker_low = nan_channel.whisker_high = std::nan("");
  p.channels = {b, nan_channel};
  r.plots = {p};
  const std::string json = in_object([&](io::JsonWriter& w) { schema::write_channelwise_section(w, r); });
  EXPECT_EQ(json,
            R"({"channelwise":{"w_HzCalibration":{"kind":"weight","shape":[2,3],"axis":0,"file_name":"w_HzCalibration_boxplot.png",)"
            R"("figure_width":1,"rotate_labels":false,"channels":[)"
            R"({"count":3,"mean":0.33333334,"q1":0.125,"median":0.25,"q3":0.5,"whisker_low":0,"whisker_high":0.75,"outlier_count":1,"outliers":[2.5]},)"
            R"({"count":1,"mean":"nan","q1":"nan","median":"nan","q3":"nan","whisker_low":"nan","whisker_high":"nan","outlier_count":0,"outliers":[]}]}},)"
            R"("channelwise_order":["w_HzCalibration"],"channelwise_sample":"0.npy"})");
}

TEST(ResultSections, StatInfoNodesCellsAndCurves) {
  analysis::StatInfoResult r;
  r.samples = {"0.npy"};
  r.nodes.push_back({"w_HzCalibration", "weight", "per-channel", {0.5f, 1.0f}, {0.5f / 127, 1.0f / 127}, {0.5f, 1.0f}, {0.25f, 0.0f}});
  r.nodes.push_back({"x_HzCalibration", "feature", "per-tensor", {1.27f}, {0.01f}, {0.7f, 0.2f}, {0.1f, 0.0f}});
  const std::string json = in_object([&](io::JsonWriter& w) { schema::write_stat_info_section(w, r); });
  // Cells: per-channel "%.6f,..." of the first value; per-tensor max over rows and smallest positive.
  EXPECT_NE(json.find(R"("w_HzCalibration":{"tensor_type":"weight","granularity":"per-channel","thresholds":[0.5,1],)"
                      R"("scales":[0.003937008,0.007874016],"max_vals":[0.5,1],"min_nz_vals":[0.25,0],)"
                      R"("cells":["weight","per-channel","0.500000,...","0.003937,...","0.500000,...","2.500000e-01,..."]})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("cells":["feature","per-tensor","1.270000","0.010000","0.700000","1.000000e-01"])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("stat_info_order":["w_HzCalibration","x_HzCalibration"])"), std::string::npos);
  // Curves are doubles of the float32 values (shortest double digits): 0.7f is 0.699999988079071.
  EXPECT_NE(json.find(R"("feature":{"nodes":["x_HzCalibration"],"thresholds":[1.2699999809265137],)"
                      R"("scales":[0.009999999776482582],"max_vals":[0.699999988079071],"min_nz_vals":[0.10000000149011612]})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("stat_info_samples":["0.npy"])"), std::string::npos);
}

TEST(ResultSections, SensitivityAnalysisCurveAndRanking) {
  analysis::SensitivityAnalysisResult r;
  r.x = {"none", "Conv_2"};
  r.cumulative = {0.75f, 1.0f};
  r.per_node = {0.875f};
  r.qtype = "int16";
  r.samples = {"9.npy"};
  r.ranked = true;
  r.ranking.push_back({"Conv_2", {0.875f}, "", false, 0.0, ""});
  r.ranking.push_back({"Add_3", {std::nanf("")}, "", false, 0.0, ""});
  r.messages = {"Start analyzing node sensitivity..."};
  const std::string json = in_object([&](io::JsonWriter& w) { schema::write_sensitivity_analysis_section(w, r); });
  EXPECT_EQ(json,
            R"({"sensitivity_analysis":{"x":["none","Conv_2"],"cumulative":[0.75,1],"per_node":[0.875],"qtype":"int16",)"
            R"("ranked":true,"ranking":{"Conv_2":{"cosine-similarity":0.875},"Add_3":{"cosine-similarity":"nan"}},)"
            R"("ranking_order":["Conv_2","Add_3"],"file_name":"partial_quantization.png"},)"
            R"("sensitivity_analysis_samples":["9.npy"],"sensitivity_analysis_messages":["Start analyzing node sensitivity..."]})");
}

TEST(ResultSections, OptionsBlocksEchoTheArguments) {
  analysis::AccErrorOptions a;
  a.quantize_node = analysis::NodeArgument::name("weight");
  a.non_quantize_node = analysis::NodeArgument::nested({{"A", "B"}, {"C"}});
  io::JsonWriter w;
  schema::write_acc_error_options(w, a);
  EXPECT_EQ(w.str(), R"({"quantize_node":"weight","non_quantize_node":[["A","B"],["C"]],"metric":"cosine-similarity",)"
                     R"("average_mode":false,"sample_selection":"last"})");
  analysis::ChannelwiseOptions c;
  c.nodes = {"n"};
  io::JsonWriter w2;
  schema::write_channelwise_options(w2, c);
  EXPECT_EQ(w2.str(), R"({"nodes_list":["n"],"axis":null,"outlier_cap":200,"sample_selection":"last"})");
}
