// The runtime test's winners (runtime_winners.h).
#include "tests/gpu/runtime_winners.h"

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ccltune::testing {
namespace {

constexpr core::Dtype kDtypes[] = {core::Dtype::kFp32, core::Dtype::kFp16, core::Dtype::kBf16};
constexpr core::RedOp kRedops[] = {core::RedOp::kSum, core::RedOp::kMax, core::RedOp::kMin};

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

}  // namespace

std::vector<TunedSize> RuntimeTestSizes() {
  using core::Op;
  return {
      {Op::kAllReduce, 2048, "oneshot:blocks=16,threads=256,mode=ll"},
      {Op::kAllReduce, 8192, "oneshot:blocks=16,threads=512,mode=push"},
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

std::string RuntimeTestResults(int world) {
  nlohmann::json out = nlohmann::json::array();
  for (const TunedSize& s : RuntimeTestSizes()) {
    for (core::Dtype d : kDtypes) {
      for (core::RedOp red : kRedops) {
        if (s.op == core::Op::kAllGather && red != core::RedOp::kSum) continue;
        out.push_back(core::ToJson(Record(s, d, red, world)));
      }
    }
  }
  return out.dump();
}

}  // namespace ccltune::testing
