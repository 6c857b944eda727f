// fp16 (IEEE binary16) and bf16 stored as 16 bits, converted to/from fp32 with
// round-to-nearest-even. Reductions run in fp32 and round back after every step.
#pragma once

#include <bit>
#include <cstdint>

namespace ccltune::worker::host {

struct Fp16 {
  std::uint16_t bits;
};
struct Bf16 {
  std::uint16_t bits;
};

inline float Bf16ToFloat(Bf16 h) { return std::bit_cast<float>(std::uint32_t{h.bits} << 16); }

inline Bf16 FloatToBf16(float f) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return Bf16{static_cast<std::uint16_t>((b >> 16) | 0x40)};
  b += 0x7fffu + ((b >> 16) & 1u);  // ties go to the even mantissa
  return Bf16{static_cast<std::uint16_t>(b >> 16)};
}

// After Maratyszcza/FP16 (MIT): exact for every fp16 value, subnormals included.
inline float Fp16ToFloat(Fp16 h) {
  const std::uint32_t w = std::uint32_t{h.bits} << 16;
  const std::uint32_t sign = w & 0x80000000u;
  const std::uint32_t two_w = w + w;
  const float normalized = std::bit_cast<float>((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float denormalized = std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
  const std::uint32_t result =
      sign | (two_w < (1u << 27) ? std::bit_cast<std::uint32_t>(denormalized)
                                 : std::bit_cast<std::uint32_t>(normalized));
  return std::bit_cast<float>(result);
}

// Round-to-nearest-even through the FPU: scaling moves the rounding point to fp16's.
inline Fp16 FloatToFp16(float f) {
  float base = (__builtin_fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const std::uint32_t w = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t shl1_w = w + w;
  const std::uint32_t sign = w & 0x80000000u;
  std::uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(base);
  const std::uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
  return Fp16{
      static_cast<std::uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign))};
}

}  // namespace ccltune::worker::host
