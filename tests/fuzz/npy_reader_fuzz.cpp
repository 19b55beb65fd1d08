// libFuzzer harness: arbitrary bytes into the .npy reader.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ptq::io::read_npy(data, size, "fuzz.npy");
  } catch (const ptq::Error&) {
  }
  return 0;
}
