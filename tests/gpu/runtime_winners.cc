// The runtime test's winners (runtime_winners.h).
#include "tests/gpu/runtime_winners.h"

#include <nlohmann/json.hpp>

#include "core/results/result.h"

namespace ccltune::testing {
namespace {

constexpr core::Dtype kDtypes[] = {core::Dtype::kFp32, core::Dtype::kFp16, core::Dtype::kBf16};
constexpr core::RedOp kRedops[] = {core::RedOp::kSum, core::RedOp::kMax, core::RedOp::kMin,
                                   core::RedOp::kAvg};

core::ChoiceResult Ok(const std::string& name, double us) {
  return {name, nlohmann::json::object(), us, us, us, 1.0, core::ChoiceStatus::kOk, ""};
}

// Winner first at 1 us, then fallbacks any runtime can run, then nccl last.
core::ResultRecord Record(const TunedSize& s, core::Dtype dtype, core::RedOp redop, int world) {
  core::ResultRecord r;
  r.fingerprint = kRuntimeTestFingerprint;
  r.op = s.op;
  r.dtype = dtype;
  r.redop = s.op == core::Op::kAllGather ? core::RedOp::kNone : redop;
  r.bytes = s.bytes;
  r.world_size = world;
  r.choices = {Ok("nccl", 10.0), Ok(s.winner, 1.0), Ok("nccl:ctas=4", 5.0)};
  if (s.op == core::Op::kAllReduce) r.choices.push_back(Ok("rs+ag", 4.0));
  (void)core::PickWinner(r, "nccl", 3);
  return r;
}

// Fused winners get our unfused LL one-shot behind them (where LL applies), so plain
// buffers run our kernel + the separate epilogue, not NCCL.
core::ResultRecord EpilogueRecord(const TunedEpilogue& s, core::Dtype dtype, int world) {
  core::ResultRecord r;
  r.fingerprint = kRuntimeTestFingerprint;
  r.op = core::Op::kAllReduce;
  r.dtype = dtype;
  r.redop = core::RedOp::kSum;
  r.epilogue.kind = s.kind;
  r.epilogue.hidden = s.hidden;
  r.bytes = s.tokens * static_cast<std::uint64_t>(s.hidden) * core::DtypeSize(dtype);
  r.world_size = world;
  r.choices = {Ok("nccl", 10.0), Ok(s.winner, 1.0), Ok("nccl:ctas=4", 5.0), Ok("rs+ag", 4.0)};
  if (s.winner.find("-fused") != std::string::npos)
    r.choices.push_back(Ok("oneshot:blocks=16,threads=256,mode=ll", 3.0));
  (void)core::PickWinner(r, "nccl", 3);
  return r;
}

}  // namespace

std::vector<TunedEpilogue> RuntimeTestEpilogues() {
  constexpr auto kRms = core::EpilogueKind::kResidualRmsNorm;
  constexpr auto kBias = core::EpilogueKind::kBias;
  return {
      {kRms, 4096, 1, "oneshot-fused:blocks=16,mode=ll,threads=256"},
      {kRms, 4096, 8, "oneshot-fused:blocks=32,mode=pull,threads=256"},
      {kRms, 4096, 64, "twoshot-fused:blocks=64,mode=pull,threads=256"},
      {kRms, 4096, 128, "oneshot:blocks=32,threads=256,mode=pull"},
      {kRms, 4096, 256, "twoshot:blocks=64,threads=256,mode=push,unroll=2"},
      {kRms, 4096, 512, "rs+ag"},
      {kRms, 4096, 1024, "nccl:ctas=8"},
      {kBias, 2048, 2, "oneshot-fused:blocks=16,mode=ll,threads=256"},
      {kBias, 2048, 32, "twoshot-fused:blocks=32,mode=pull,threads=256"},
      {kBias, 2048, 128, "oneshot:blocks=16,threads=256,mode=ll"},
  };
}

std::vector<TunedSize> RuntimeTestSizes() {
  using core::Op;
  return {
      {Op::kAllReduce, 2048, "oneshot:blocks=16,threads=256,mode=ll"},
      {Op::kAllReduce, 8192, "oneshot:blocks=16,threads=512,mode=push"},
      // staged=1 (issue 43): the input copied into peer memory, the output out of it where
      // the peers share it; plain and pooled buffers, in place too.
      {Op::kAllReduce, 16384, "oneshot:blocks=32,mode=pull,staged=1,threads=256"},
      {Op::kAllReduce, 1 << 20, "twoshot:blocks=64,mode=pull,staged=1,threads=256,unroll=2"},
      {Op::kAllGather, 16384, "p2p:blocks=16,mode=pull,staged=1,threads=256"},
      {Op::kAllGather, 262144, "p2p:blocks=16,mode=push,staged=1,threads=256"},
      {Op::kReduceScatter, 65536, "twoshot:blocks=32,mode=pull,staged=1,threads=256"},
      {Op::kAllReduce, 32768, "oneshot:blocks=32,threads=256,mode=pull"},
      {Op::kAllReduce, 131072, "twoshot:blocks=64,threads=256,mode=pull"},
      {Op::kAllReduce, 524288, "twoshot:blocks=64,threads=256,mode=push,unroll=2"},
      {Op::kAllReduce, 2 << 20, "rs+ag"},
      {Op::kAllReduce, 8 << 20, "nccl:ctas=8"},
      {Op::kAllGather, 4096, "p2p:blocks=16,threads=512,mode=push"},
      {Op::kAllGather, 65536, "p2p:blocks=32,threads=512,mode=pull"},
      {Op::kAllGather, 1 << 20, "ce:mode=pull"},
      {Op::kAllGather, 8 << 20, "nccl"},
      {Op::kReduceScatter, 8192, "twoshot:blocks=16,threads=256,mode=push"},
      {Op::kReduceScatter, 262144, "twoshot:blocks=64,threads=256,mode=pull"},
      {Op::kReduceScatter, 4 << 20, "nccl:ctas=8"},
  };
}

std::vector<TunedSize> HierTestSizes() {
  using core::Op;
  return {
      {Op::kAllReduce, 2048, "oneshot:blocks=16,threads=256,mode=ll"},
      {Op::kAllReduce, 65536, kHierTestChoice},
      {Op::kAllReduce, 524288, kHierTestChoice},
      {Op::kAllReduce, 4 << 20, kHierTestChoice},
      {Op::kAllGather, 65536, "nccl"},
  };
}

namespace {

nlohmann::json SizesJson(const std::vector<TunedSize>& sizes, int world) {
  nlohmann::json out = nlohmann::json::array();
  for (const TunedSize& s : sizes) {
    for (core::Dtype d : kDtypes) {
      for (core::RedOp red : kRedops) {
        if (s.op == core::Op::kAllGather && red != core::RedOp::kSum) continue;
        out.push_back(core::ToJson(Record(s, d, red, world)));
      }
    }
  }
  return out;
}

}  // namespace

std::string HierTestResults(int world) { return SizesJson(HierTestSizes(), world).dump(); }

std::string RuntimeTestResults(int world) {
  nlohmann::json out = SizesJson(RuntimeTestSizes(), world);
  for (const TunedEpilogue& s : RuntimeTestEpilogues()) {
    for (core::Dtype d : kDtypes) out.push_back(core::ToJson(EpilogueRecord(s, d, world)));
  }
  return out.dump();
}

}  // namespace ccltune::testing
