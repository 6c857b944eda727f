// The fake NCCL caller of the plugin tests (tuner_harness.h).
#include "tests/plugin/tuner_harness.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/gpu/fingerprint_probe.h"

// libnccl's entry point, as the plugin finds it in a real process (RTLD_DEFAULT).
extern "C" __attribute__((visibility("default"))) int ncclGetVersion(int* version) {
  *version = ccltune::testing::kFakeNcclVersion;
  return 0;
}

namespace ccltune::testing {
namespace {

std::mutex g_log_mu;
std::vector<LogLine> g_log;

void Logger(int level, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.push_back({level, buf});
}

}  // namespace

CostTable::CostTable() {
  for (int a = 0; a < apply::abi::kNumAlgorithms; ++a)
    for (int p = 0; p < apply::abi::kNumProtocols; ++p)
      cost[a][p] = (a == apply::abi::kAlgoTree || a == apply::abi::kAlgoRing)
                       ? 10.0f + static_cast<float>(a * 3 + p)
                       : -1.0f;
}

bool CostTable::Untouched() const {
  CostTable fresh;
  for (int a = 0; a < apply::abi::kNumAlgorithms; ++a)
    for (int p = 0; p < apply::abi::kNumProtocols; ++p)
      if (cost[a][p] != fresh.cost[a][p]) return false;
  return true;
}

std::pair<int, int> CostTable::Forced() const {
  std::pair<int, int> zero{-1, -1};
  for (int a = 0; a < apply::abi::kNumAlgorithms; ++a) {
    for (int p = 0; p < apply::abi::kNumProtocols; ++p) {
      if (cost[a][p] == 0.0f) {
        if (zero.first >= 0) return {-1, -1};
        zero = {a, p};
      } else if (cost[a][p] >= 0 && cost[a][p] != 1e9f) {
        return {-1, -1};
      }
    }
  }
  return zero;
}

LoadedTuner::LoadedTuner(const std::string& path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    error_ = std::string("dlopen: ") + dlerror();
    return;
  }
  v5_ = static_cast<const apply::abi::TunerV5*>(dlsym(handle_, "ncclTunerPlugin_v5"));
  v4_ = static_cast<const apply::abi::TunerV4*>(dlsym(handle_, "ncclTunerPlugin_v4"));
  if (!ok()) error_ = "ncclTunerPlugin_v5 or _v4 is not exported by " + path;
}

LoadedTuner::~LoadedTuner() {
  if (handle_ != nullptr) dlclose(handle_);
}

void ClearPluginLog() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.clear();
}

std::vector<LogLine> PluginLog() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  return g_log;
}

std::string PluginLogText() {
  std::string out;
  for (const auto& l : PluginLog()) out += "[" + std::to_string(l.level) + "] " + l.text + "\n";
  return out;
}

apply::abi::DebugLogger PluginLogger() { return &Logger; }

InitResult InitV5(const LoadedTuner& t, std::size_t ranks, std::size_t nodes) {
  InitResult r;
  apply::abi::NvlDomainInfoV5 nvl{1, static_cast<int>(ranks), static_cast<int>(ranks)};
  apply::abi::TunerConstantsV5 constants{};
  const auto start = std::chrono::steady_clock::now();
  r.rc = t.v5().init(&r.ctx, 0x1234abcdULL, ranks, nodes, PluginLogger(), &nvl, &constants);
  r.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  return r;
}

static core::FingerprintInput ExpectedInput(int ranks) {
  // What the worker's NCCL backend reports for rank 0's device, then FingerprintOf's
  // topology (one host).
  core::FingerprintInput in = gpu::ProbeFingerprint(0, ranks, kFakeNcclVersion);
  in.nodes = 1;
  in.gpus_per_node = ranks;
  return in;
}

std::string ExpectedFingerprint(int ranks) { return core::Fingerprint(ExpectedInput(ranks)); }
std::string ExpectedFingerprintJson(int ranks) {
  return core::CanonicalFingerprintJson(ExpectedInput(ranks));
}

core::ResultRecord MakeRecord(const std::string& fp, core::Op op, core::Dtype dtype,
                              std::uint64_t bytes, const std::string& winner) {
  core::ResultRecord r;
  r.fingerprint = fp;
  r.op = op;
  r.dtype = dtype;
  r.redop = core::IsReducing(op) ? core::RedOp::kSum : core::RedOp::kNone;
  r.bytes = bytes;
  r.winner = winner;
  r.time_us = 10;
  r.default_time_us = 12;
  r.speedup_vs_default = 1.2;
  r.world_size = 4;
  r.tuned_at = "2026-11-22T08:00:00Z";
  r.job_id = "test";
  r.tool_version = "test";
  core::ChoiceResult def{"nccl", nlohmann::json::object(), 12, 11, 13, 1.0};
  core::ChoiceResult win{winner, nlohmann::json::object(), 10, 9, 11, 1.2};
  r.choices = {def};
  if (winner != "nccl") r.choices.push_back(win);
  return r;
}

}  // namespace ccltune::testing
