// libFuzzer harness: arbitrary bytes into the ONNX reader and the executor's load-time checks.
// Anything but a ptq::Error (crash, hang, sanitizer report, other exception) is a bug.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "exec/executor.h"
#include "reader/onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ptq::ir::Model model = ptq::reader::read_onnx(data, size);
    ptq::exec::Executor executor(std::move(model));
  } catch (const ptq::Error&) {
  }
  try {
    ptq::reader::read_tensor_proto(data, size);
  } catch (const ptq::Error&) {
  }
  return 0;
}
