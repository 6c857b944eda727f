// Turns `ccltune tune` flags into a plan: start from --plan FILE or the backend's default
// plan, then apply --op/--dtypes/--sizes/--choices/--iters/... Every bad flag gives one
// InvalidArgument naming the flag.
#pragma once

#include <optional>
#include <string>

#include "core/plan.h"

namespace ccltune::worker::cli {

struct PlanFlags {
  std::string plan_file;
  std::string ops;      // "allReduce,allGather"
  std::string dtypes;   // "fp32,bf16"
  std::string sizes;    // "1KiB:4MiB[:factor]" or "4096,1MiB"
  std::string choices;  // "ring,direct"
  std::optional<int> iters, rounds, warmup;
  std::optional<double> choice_timeout, presync_window, rendezvous_timeout;
  bool cuda_graph = false;
};

core::Result<core::Plan> BuildPlan(const PlanFlags& flags, const std::string& backend,
                                   const core::PlanLimits& limits);

}  // namespace ccltune::worker::cli
