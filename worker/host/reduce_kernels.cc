#include "worker/host/reduce_kernels.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "worker/host/half.h"

namespace ccltune::worker::host {
namespace {

// How a stored element becomes a computable value and back. Integers compute in a wider
// type and are truncated back: modular, hence order-independent and exact.
template <class T>
struct Codec {
  using Compute = T;
  static Compute Load(T v) { return v; }
  static T Store(Compute v) { return v; }
};
template <>
struct Codec<std::int32_t> {
  using Compute = std::int64_t;
  static Compute Load(std::int32_t v) { return v; }
  static std::int32_t Store(Compute v) { return static_cast<std::int32_t>(v); }
};
template <>
struct Codec<std::int8_t> {
  using Compute = std::int32_t;
  static Compute Load(std::int8_t v) { return v; }
  static std::int8_t Store(Compute v) { return static_cast<std::int8_t>(v); }
};
template <>
struct Codec<Fp16> {
  using Compute = float;
  static float Load(Fp16 v) { return Fp16ToFloat(v); }
  static Fp16 Store(float v) { return FloatToFp16(v); }
};
template <>
struct Codec<Bf16> {
  using Compute = float;
  static float Load(Bf16 v) { return Bf16ToFloat(v); }
  static Bf16 Store(float v) { return FloatToBf16(v); }
};

struct Sum {
  template <class C>
  static C Apply(C a, C b) {
    return a + b;
  }
};
struct Prod {
  template <class C>
  static C Apply(C a, C b) {
    // Integer products wrap: compute them unsigned (defined) and let Store truncate.
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};
struct Max {
  template <class C>
  static C Apply(C a, C b) {
    return std::max(a, b);
  }
};
struct Min {
  template <class C>
  static C Apply(C a, C b) {
    return std::min(a, b);
  }
};

template <class T, class Op>
void Kernel(void* out, const void* a, const void* b, std::size_t count) {
  using K = Codec<T>;
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < count; ++i) o[i] = K::Store(Op::Apply(K::Load(x[i]), K::Load(y[i])));
}

template <class T>
core::Result<ReduceFn> ForOp(core::RedOp redop) {
  switch (redop) {
    case core::RedOp::kSum:
    case core::RedOp::kAvg:
      return &Kernel<T, Sum>;
    case core::RedOp::kProd:
      return &Kernel<T, Prod>;
    case core::RedOp::kMax:
      return &Kernel<T, Max>;
    case core::RedOp::kMin:
      return &Kernel<T, Min>;
    case core::RedOp::kNone:
      break;
  }
  return core::InvalidArgument(std::string("no reduction kernel for reduceOp '") +
                               core::RedOpName(redop) + "'");
}

template <class T>
void Divide(void* buf, std::size_t count, int world) {
  using K = Codec<T>;
  T* p = static_cast<T*>(buf);
  for (std::size_t i = 0; i < count; ++i) {
    if constexpr (std::is_integral_v<T>) {
      p[i] = static_cast<T>(p[i] / world);  // C++ division truncates toward zero
    } else {
      p[i] = K::Store(K::Load(p[i]) / static_cast<float>(world));
    }
  }
}

}  // namespace

void DivideInPlace(core::Dtype dtype, void* buf, std::size_t count, int world) {
  switch (dtype) {
    case core::Dtype::kFp32:
      return Divide<float>(buf, count, world);
    case core::Dtype::kFp16:
      return Divide<Fp16>(buf, count, world);
    case core::Dtype::kBf16:
      return Divide<Bf16>(buf, count, world);
    case core::Dtype::kInt32:
      return Divide<std::int32_t>(buf, count, world);
    case core::Dtype::kInt8:
      return Divide<std::int8_t>(buf, count, world);
  }
}

core::Result<ReduceFn> GetReduceFn(core::Dtype dtype, core::RedOp redop) {
  switch (dtype) {
    case core::Dtype::kFp32:
      return ForOp<float>(redop);
    case core::Dtype::kFp16:
      return ForOp<Fp16>(redop);
    case core::Dtype::kBf16:
      return ForOp<Bf16>(redop);
    case core::Dtype::kInt32:
      return ForOp<std::int32_t>(redop);
    case core::Dtype::kInt8:
      return ForOp<std::int8_t>(redop);
  }
  return core::InvalidArgument("unknown dtype");
}

}  // namespace ccltune::worker::host
