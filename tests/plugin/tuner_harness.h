// A fake NCCL for the plugin tests: dlopen()s the built libnccl-tuner-ccltune.so, finds
// ncclTunerPlugin_v5/_v4 the way NCCL's src/plugin/tuner.cc does, and calls init /
// getCollInfo / finalize with a cost table laid out as NCCL's and a logFunction that keeps
// what the plugin logged. The test binary also exports ncclGetVersion (kFakeNcclVersion),
// as libnccl does in a real process, so the plugin's fingerprint has an NCCL version.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/apply/tuner_abi.h"
#include "core/node/fingerprint.h"
#include "core/results/result.h"

namespace ccltune::testing {

inline constexpr int kFakeNcclVersion = 22809;

// NCCL's table for one call: Tree and Ring offered for every protocol (what a 1-node
// NVLink machine shows), the other algorithms ruled out (-1).
struct CostTable {
  float cost[apply::abi::kNumAlgorithms][apply::abi::kNumProtocols];
  CostTable();
  float** raw() { return reinterpret_cast<float**>(cost); }
  bool Untouched() const;  // equal to a fresh table
  // The only 0 entry with every other offered entry 1e9, as {algo, proto}; {-1,-1} if not.
  std::pair<int, int> Forced() const;
};

class LoadedTuner {
 public:
  explicit LoadedTuner(const std::string& path);  // CCLTUNE_PLUGIN_SO by default
  ~LoadedTuner();
  bool ok() const { return v5_ != nullptr && v4_ != nullptr; }
  const std::string& error() const { return error_; }
  const apply::abi::TunerV5& v5() const { return *v5_; }
  const apply::abi::TunerV4& v4() const { return *v4_; }

 private:
  void* handle_ = nullptr;
  const apply::abi::TunerV5* v5_ = nullptr;
  const apply::abi::TunerV4* v4_ = nullptr;
  std::string error_;
};

// What the plugin logged through the logFunction since the last Clear().
struct LogLine {
  int level;
  std::string text;
};
void ClearPluginLog();
std::vector<LogLine> PluginLog();
std::string PluginLogText();  // all lines, for failure messages
apply::abi::DebugLogger PluginLogger();

// One communicator's init as NCCL does it; returns the context and how long init took.
struct InitResult {
  int rc = -1;
  void* ctx = nullptr;
  std::chrono::milliseconds took{0};
};
InitResult InitV5(const LoadedTuner& t, std::size_t ranks, std::size_t nodes);

// The fingerprint the worker publishes under on this machine for `ranks` ranks on one
// node (core/gpu/fingerprint_probe.h with the fake NCCL version).
std::string ExpectedFingerprint(int ranks);
std::string ExpectedFingerprintJson(int ranks);

// A schema-1 record with `winner` for (op, dtype, sum/none, bytes).
core::ResultRecord MakeRecord(const std::string& fp, core::Op op, core::Dtype dtype,
                              std::uint64_t bytes, const std::string& winner);

}  // namespace ccltune::testing
