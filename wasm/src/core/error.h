#pragma once
// Every failure the core reports crosses the API boundary as a ptq::Error with a message that names
// the file / node / field at fault. Kernels and readers throw; the bind layer catches and returns text.
#include <stdexcept>
#include <string>

namespace ptq {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown for malformed bytes (protobuf, npy) — a distinct type so callers can say "corrupt file".
class FormatError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] inline void fail(const std::string& message) { throw Error(message); }

inline void check(bool condition, const std::string& message) {
  if (!condition) fail(message);
}

}  // namespace ptq
