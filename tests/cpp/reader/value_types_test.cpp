// Sequence and optional types: the reader keeps sequence_type / optional_type of a TypeProto (the
// writer writes them back), and reads SequenceProto / OptionalProto values as ONNX's test data stores
// them. The bytes are written field by field here (io/pb_writer.h), numbers from onnx.proto and
// onnx-data.proto.
#include <gtest/gtest.h>

#include "graph_builder.h"
#include "io/pb_writer.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"

namespace ptq {
namespace {

// TensorProto: dims (1), data_type (2), float_data (4, packed), name (8).
void write_floats(pb::Writer& t, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  for (int64_t d : dims) t.int64(1, d);
  t.int64(2, 1);
  t.packed_floats(4, v);
}

TEST(ValueTypes, SequenceAndOptionalTypesSurviveAWriteAndRead) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {2});
  b.node("make", "SequenceConstruct", {"x"}, {"s"});
  b.node("wrap", "Optional", {"s"}, {"o"});
  b.output("o");
  ir::Model m = b.model();
  auto tensor_info = std::make_shared<ir::ValueInfo>();
  tensor_info->dtype = DType::Float;
  tensor_info->dims = {2};
  tensor_info->dim_params = {""};
  tensor_info->has_shape = true;
  ir::ValueInfo& s = m.graph.values[static_cast<size_t>(m.graph.find_value("s"))].info;
  s.kind = ValueKind::Sequence;
  s.elem = tensor_info;
  ir::ValueInfo& o = m.graph.values[static_cast<size_t>(m.graph.find_value("o"))].info;
  o.kind = ValueKind::Optional;
  auto seq_info = std::make_shared<ir::ValueInfo>();
  seq_info->kind = ValueKind::Sequence;
  seq_info->elem = tensor_info;
  o.elem = seq_info;

  const std::vector<uint8_t> bytes = reader::write_onnx(m);
  const ir::Model back = reader::read_onnx(bytes.data(), bytes.size());
  const ir::ValueInfo& s2 = back.graph.value(back.graph.find_value("s")).info;
  EXPECT_EQ(s2.kind, ValueKind::Sequence);
  EXPECT_EQ(s2.dtype, DType::Undefined);
  EXPECT_FALSE(s2.has_shape);
  ASSERT_TRUE(s2.elem);
  EXPECT_EQ(s2.elem->kind, ValueKind::Dense);
  EXPECT_EQ(s2.elem->dtype, DType::Float);
  EXPECT_EQ(s2.elem->dims, (std::vector<int64_t>{2}));
  const ir::ValueInfo& o2 = back.graph.value(back.graph.outputs[0]).info;
  EXPECT_EQ(o2.kind, ValueKind::Optional);
  ASSERT_TRUE(o2.elem);
  EXPECT_EQ(o2.elem->kind, ValueKind::Sequence);
  ASSERT_TRUE(o2.elem->elem);
  EXPECT_EQ(o2.elem->elem->dtype, DType::Float);
  // The tensor input is still a tensor.
  EXPECT_EQ(back.graph.value(back.graph.inputs[0]).info.kind, ValueKind::Dense);
  EXPECT_EQ(reader::write_onnx(back), bytes);
}

TEST(ValueTypes, SequenceAndOptionalProtos) {
  // SequenceProto: name (1), elem_type (2) = 1 (tensor), two tensor_values (3).
  pb::Writer seq;
  seq.string(1, "s");
  seq.int64(2, 1);
  seq.message(3, [](pb::Writer& t) { write_floats(t, {2}, {1, 2}); });
  seq.message(3, [](pb::Writer& t) { write_floats(t, {1}, {3}); });
  std::string name;
  const Tensor s = reader::read_value_proto(seq.bytes().data(), seq.bytes().size(), ValueKind::Sequence, {}, &name);
  EXPECT_EQ(name, "s");
  ASSERT_EQ(s.kind(), ValueKind::Sequence);
  ASSERT_EQ(s.items().size(), 2u);
  EXPECT_EQ(s.elem_dtype(), DType::Float);
  EXPECT_EQ(s.items()[0].to_float_vector(), (std::vector<float>{1, 2}));
  EXPECT_EQ(s.items()[1].shape(), (Shape{1}));

  // OptionalProto: elem_type (2) = 3 (sequence), sequence_value (5) holding one tensor.
  pb::Writer opt;
  opt.int64(2, 3);
  opt.message(5, [](pb::Writer& q) {
    q.int64(2, 1);
    q.message(3, [](pb::Writer& t) { write_floats(t, {1}, {7}); });
  });
  const Tensor o = reader::read_value_proto(opt.bytes().data(), opt.bytes().size(), ValueKind::Optional);
  ASSERT_EQ(o.kind(), ValueKind::Optional);
  ASSERT_EQ(o.items().size(), 1u);
  ASSERT_EQ(o.items()[0].kind(), ValueKind::Sequence);
  EXPECT_EQ(o.items()[0].items()[0].to_float_vector(), (std::vector<float>{7}));

  // An empty OptionalProto (elem_type 0, no value).
  pb::Writer none;
  none.string(1, "n");
  none.int64(2, 0);
  const Tensor e = reader::read_value_proto(none.bytes().data(), none.bytes().size(), ValueKind::Optional);
  EXPECT_EQ(e.kind(), ValueKind::Optional);
  EXPECT_TRUE(e.items().empty());

  // A map element is an error naming the file.
  pb::Writer map;
  map.int64(2, 4);
  reader::ReadOptions options;
  options.file_name = "input_0.pb";
  try {
    reader::read_value_proto(map.bytes().data(), map.bytes().size(), ValueKind::Sequence, options);
    FAIL() << "read";
  } catch (const Error& err) {
    EXPECT_EQ(std::string(err.what()),
              "'input_0.pb' is not a valid SequenceProto: element type 4 is not supported (tensors and sequences are)");
  }
}

}  // namespace
}  // namespace ptq
