#include "io/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ptq;

TEST(JsonWriter, NumbersStringsAndNonFinite) {
  io::JsonWriter w;
  w.begin_object().field("a", 0.99812f).field("b", std::nan("")).field("c", -INFINITY).field("s", "q\"\n");
  w.key("l").begin_array().value(1).value(true).null().end_array().end_object();
  EXPECT_EQ(w.str(), R"({"a":0.99812,"b":"nan","c":"-inf","s":"q\"\n","l":[1,true,null]})");
}
