#include "worker/host/data_gen.h"

#include <cstring>

#include "worker/host/half.h"

namespace ccltune::worker::host {
namespace {

std::uint64_t SplitMix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

float RawFloat(std::uint64_t x) { return 0.5f + static_cast<float>(x >> 40) * 0x1.0p-24f; }

int RawInt(std::uint64_t x) {
  const int v = static_cast<int>((x >> 33) % 10) - 5;  // -5..4
  return v >= 0 ? v + 1 : v;                           // -5..-1, 1..5
}

}  // namespace

std::uint64_t MakeSeed(const SeedInput& in) {
  std::uint64_t h = SplitMix64(static_cast<std::uint64_t>(in.op) + 1);
  h = SplitMix64(h ^ static_cast<std::uint64_t>(in.dtype));
  h = SplitMix64(h ^ static_cast<std::uint64_t>(in.redop));
  h = SplitMix64(h ^ in.bytes);
  h = SplitMix64(h ^ static_cast<std::uint64_t>(in.rank));
  return SplitMix64(h ^ in.generation);
}

double InputValue(core::Dtype dtype, std::uint64_t seed, std::size_t i) {
  const std::uint64_t x = SplitMix64(seed + i * 0xD1B54A32D192ED03ull);
  switch (dtype) {
    case core::Dtype::kFp32:
      return RawFloat(x);
    case core::Dtype::kFp16:
      return Fp16ToFloat(FloatToFp16(RawFloat(x)));
    case core::Dtype::kBf16:
      return Bf16ToFloat(FloatToBf16(RawFloat(x)));
    case core::Dtype::kInt32:
    case core::Dtype::kInt8:
      return RawInt(x);
  }
  return 0;
}

void FillInput(void* buf, core::Dtype dtype, std::uint64_t seed, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const double v = InputValue(dtype, seed, i);
    switch (dtype) {
      case core::Dtype::kFp32:
        static_cast<float*>(buf)[i] = static_cast<float>(v);
        break;
      case core::Dtype::kFp16:
        static_cast<Fp16*>(buf)[i] = FloatToFp16(static_cast<float>(v));
        break;
      case core::Dtype::kBf16:
        static_cast<Bf16*>(buf)[i] = FloatToBf16(static_cast<float>(v));
        break;
      case core::Dtype::kInt32:
        static_cast<std::int32_t*>(buf)[i] = static_cast<int>(v);
        break;
      case core::Dtype::kInt8:
        static_cast<std::int8_t*>(buf)[i] = static_cast<std::int8_t>(v);
    }
  }
}

double LoadElement(core::Dtype dtype, const void* buf, std::size_t i) {
  switch (dtype) {
    case core::Dtype::kFp32:
      return static_cast<const float*>(buf)[i];
    case core::Dtype::kFp16:
      return Fp16ToFloat(static_cast<const Fp16*>(buf)[i]);
    case core::Dtype::kBf16:
      return Bf16ToFloat(static_cast<const Bf16*>(buf)[i]);
    case core::Dtype::kInt32:
      return static_cast<const std::int32_t*>(buf)[i];
    case core::Dtype::kInt8:
      return static_cast<const std::int8_t*>(buf)[i];
  }
  return 0;
}

}  // namespace ccltune::worker::host
