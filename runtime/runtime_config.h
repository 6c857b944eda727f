// The runtime's settings: the C config struct (ccltune.h) resolved against the environment
// and validated, field by field. An error names the field or variable and what it allows.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "ccltune.h"
#include "core/apply/plugin_config.h"
#include "core/base/status.h"

namespace ccltune::runtime {

// Every launch signature (choice, op, dtype, count) keeps its own partition (dispatch.cc), and
// push kernels double-buffer a slot per rank: a 4-GPU sweep of 1 KiB-64 MiB filled 64 MiB at
// 8 MiB. 256 MiB per GPU holds such a sweep; CCLTUNE_STAGING_BYTES or stagingBytes change it.
inline constexpr std::size_t kDefaultStagingBytes = std::size_t{256} << 20;
inline constexpr std::size_t kMaxPoolBytes = std::size_t{64} << 30;
inline constexpr std::size_t kMaxStagingBytes = std::size_t{16} << 30;
// ccltuneConfig_t.timeoutMs / CCLTUNE_TIMEOUT_MS.
inline constexpr int kMinTimeoutMs = 100;
inline constexpr int kMaxTimeoutMs = 600000;

struct RuntimeConfig {
  // Where winners come from and how long init may spend loading them: the plugin's
  // settings (CCLTUNE_RESULTS_FILE, CCLTUNE_REDIS_URL, CCLTUNE_PLUGIN_TIMEOUT_MS), so the
  // plugin and the runtime of one process read the same winners within the same bound.
  apply::PluginConfig source;
  std::string fingerprint;  // pinned; empty = computed
  std::string fingerprint_source = "CCLTUNE_FINGERPRINT";
  // Bounds init's and destroy's collective steps and every wait of our peer kernels for a
  // peer (ccltuneConfig_t.timeoutMs, CCLTUNE_TIMEOUT_MS). A kernel whose peer does not
  // arrive within it stops the GPU context (issue 36): it must exceed the longest
  // legitimate skew between ranks at a collective.
  std::chrono::milliseconds timeout{30000};
  std::size_t pool_bytes = 0;
  std::size_t staging_bytes = kDefaultStagingBytes;
  bool peer_memory = true;
  // One-shot pull in place with its results held in registers (kernels::kHeldVectors) until
  // every rank has read, instead of another choice; CCLTUNE_HOLD_IN_PLACE=0 turns it off.
  // On 4x H200 it runs within 0.2 us of the out-of-place kernel: nccl-tests in place at
  // 256 KiB 8.61 -> 7.45 us (tests/gpu/results/direct.md).
  bool hold_in_place = true;
  // CCLTUNE_CONFIRM_CALLS (confirm/trial_rule.h): timed calls per side of the in-program
  // trial of each tuned size's choice for a program's own buffers, eager; 0 (the default)
  // runs the choice untried. Every rank must give the same, else none tries (init's summary).
  int confirm_calls = 0;
  // Init's one summary line on stderr (rank 0). libccltune-nccl turns it off and says the
  // same in its own line (RuntimeComm::summary()), so a fault is one line, not two.
  bool log_summary = true;
};

// `config` may be null (every default). Fields left zero/NULL/-1 take the environment's
// value, then the default.
core::Result<RuntimeConfig> ResolveConfig(const ccltuneConfig_t* config);

}  // namespace ccltune::runtime
