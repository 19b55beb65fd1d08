#pragma once
// Bit-exact float16 / bfloat16 <-> float32 conversions (round to nearest even), in software:
// wasm has no F16C and libc++ 13 has no std::bit_cast, so memcpy does the type punning.
#include <cstdint>
#include <cstring>

namespace ptq {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    // Subnormal half: value = mant * 2^-24, exact in float32.
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t float_to_half(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN / inf
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520 -> inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): scale so the half ulp 2^-24 becomes 1 and round to nearest even.
    const float scaled = bits_float(abs) * 16777216.0f;  // exact: power of two
    const float r = scaled + 12582912.0f - 12582912.0f;   // 1.5*2^23 trick: round half to even
    return sign | static_cast<uint16_t>(static_cast<uint32_t>(r));
  }
  // Normal: drop 13 mantissa bits with round-half-to-even.
  uint32_t rebias = abs - 0x38000000u;  // exponent 127 -> 15
  const uint32_t lsb = (rebias >> 13) & 1u;
  rebias += 0xfffu + lsb;
  return sign | static_cast<uint16_t>(rebias >> 13);
}

inline float bfloat16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

inline uint16_t float_to_bfloat16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace ptq
