// libnccl-tuner-ccltune.so: NCCL tuner plugin applying ccltune's published winners
// (docs/design.md §8). Exports ncclTunerPlugin_v5 and ncclTunerPlugin_v4 side by side; all state
// lives in the per-communicator TunerContext. No exception or error reaches NCCL: a
// failure is logged and means NCCL's own choice, never a failed communicator.
#include <exception>
#include <new>

#include "core/apply/tuner_abi.h"
#include "plugin/tuner_context.h"

namespace ccltune::plugin {
namespace {

constexpr char kName[] = "ccltune";

abi::NcclResult InitV5(void** ctx, std::uint64_t comm_id, std::size_t n_ranks, std::size_t n_nodes,
                       abi::DebugLogger log, abi::NvlDomainInfoV5*, abi::TunerConstantsV5*) {
  if (ctx == nullptr) return abi::kSuccess;
  *ctx = nullptr;
  try {
    *ctx = TunerContext::Create(comm_id, n_ranks, n_nodes, log).release();
  } catch (const std::exception& e) {
    NcclLog(log).Write(abi::kLogWarn, abi::kLogInit, __LINE__,
                       std::string("init failed: ") + e.what() + "; NCCL's own choices apply");
  } catch (...) {
    NcclLog(log).Write(abi::kLogWarn, abi::kLogInit, __LINE__, "init failed; NCCL's own choices");
  }
  return abi::kSuccess;
}

abi::NcclResult InitV4(std::size_t n_ranks, std::size_t n_nodes, abi::DebugLogger log, void** ctx) {
  return InitV5(ctx, 0, n_ranks, n_nodes, log, nullptr, nullptr);  // v4 has no commId
}

abi::NcclResult GetCollInfo(void* ctx, int coll_type, std::size_t n_bytes, int /*num_pipe_ops*/,
                            float** cost_table, int num_algo, int num_proto, int /*reg_buff*/,
                            int* n_channels) {
  if (ctx == nullptr) return abi::kSuccess;
  try {
    static_cast<TunerContext*>(ctx)->GetCollInfo(coll_type, n_bytes, cost_table, num_algo,
                                                 num_proto, n_channels);
  } catch (...) {
    // Only allocation can throw here; the table is untouched or fully forced either way.
  }
  return abi::kSuccess;
}

abi::NcclResult Finalize(void* ctx) {
  delete static_cast<TunerContext*>(ctx);
  return abi::kSuccess;
}

}  // namespace
}  // namespace ccltune::plugin

extern "C" {
__attribute__((
    visibility("default"))) extern const ccltune::plugin::abi::TunerV5 ncclTunerPlugin_v5;
__attribute__((
    visibility("default"))) extern const ccltune::plugin::abi::TunerV4 ncclTunerPlugin_v4;

const ccltune::plugin::abi::TunerV5 ncclTunerPlugin_v5 = {
    ccltune::plugin::kName, ccltune::plugin::InitV5, ccltune::plugin::GetCollInfo,
    ccltune::plugin::Finalize};
const ccltune::plugin::abi::TunerV4 ncclTunerPlugin_v4 = {
    ccltune::plugin::kName, ccltune::plugin::InitV4, ccltune::plugin::GetCollInfo,
    ccltune::plugin::Finalize};
}
