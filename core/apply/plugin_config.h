// The plugin's settings, from the environment of the application NCCL runs in:
//   CCLTUNE_RESULTS_FILE       a JSON array of records (`ccltune export --format json`);
//                              takes precedence over Redis when both are set
//   CCLTUNE_REDIS_URL          redis://[[user]:password@]host[:port][/db] (the shared cache)
//   CCLTUNE_PLUGIN_TIMEOUT_MS  how long init may spend loading winners, 1..10000 (default 100)
//   CCLTUNE_PLUGIN_DTYPE       the dtype whose winners apply: fp32|fp16|bf16|int32|int8
//                              (default: the first tuned of bf16, fp16, fp32, int32, int8)
//   CCLTUNE_FINGERPRINT        use this fingerprint instead of computing it
// A value that is set but not allowed is an error naming the variable; the plugin then
// stays inactive (NCCL's own choices) and says so in NCCL's log, rather than guessing.
// Also read: NCCL's own NCCL_MIN_CTAS, the channel ceiling of applied_choice.h.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/base/status.h"
#include "core/plan/types.h"

namespace ccltune::apply {

inline constexpr std::chrono::milliseconds kDefaultLoadTimeout{100};

struct PluginConfig {
  std::string results_file;
  std::string redis_url;
  std::chrono::milliseconds load_timeout = kDefaultLoadTimeout;
  std::optional<core::Dtype> dtype;
};

core::Result<PluginConfig> PluginConfigFromEnv();

// NCCL_MIN_CTAS as the channel ceiling: unset or empty → 0 (unknown). A value that is not
// 0 or a positive integer is InvalidArgument naming the variable; unlike the settings
// above it does not turn the plugin off: the caller warns and uses 0, which only stops
// ctas winners from being applied.
core::Result<int> ChannelCeilingFromEnv();

}  // namespace ccltune::apply
