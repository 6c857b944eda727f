// Turns `ccltune tune` flags into a plan: start from --plan FILE or the backend's default
// plan, then apply --op/--dtypes/--sizes/--epilogue/--tokens/--choices/--iters/... Every bad
// flag gives one InvalidArgument naming the flag.
//
// --epilogue KIND[,hidden=H][,eps=E] (issue 16) turns the plan's all-reduce entries into
// fused problems (an epilogue follows an all-reduce only, so without --op the other entries
// are dropped); --tokens lists their rows (default kDefaultEpilogueTokens when an entry has
// none). --tokens needs an epilogue and excludes --sizes. --epilogue none makes every
// entry a plain collective again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/plan/plan.h"

namespace ccltune::worker::cli {

struct PlanFlags {
  std::string plan_file;
  std::string ops;       // "allReduce,allGather"
  std::string dtypes;    // "fp32,bf16"
  std::string redop;     // "avg": the reducing entries' reduceOp; empty keeps the plan's (sum)
  std::string sizes;     // "1KiB:4MiB[:factor]" or "4096,1MiB"
  std::string choices;   // "ring,direct"
  std::string epilogue;  // "residualRmsNorm,hidden=4096[,eps=1e-5]", "bias,hidden=H", "none"
  std::string tokens;    // "1,8,32,128" or "1:2048[:factor]"
  std::string search;    // "exhaustive" | "adaptive"; empty keeps the plan's (adaptive)
  std::optional<int> iters, rounds, warmup;
  std::optional<int> emulate_nodes;  // the plan's emulatedNodes; 0 turns a plan's off
  std::optional<double> choice_timeout, presync_window, rendezvous_timeout;
  bool cuda_graph = false;
};

inline constexpr std::uint64_t kDefaultEpilogueTokens[] = {1, 8, 32, 128, 512, 2048};

// The --epilogue value; the error names the flag and the allowed form.
core::Result<core::Epilogue> ParseEpilogueFlag(const std::string& text);

// The --plan file's plan (it names the file in its errors), or none without --plan.
core::Result<std::optional<core::Plan>> LoadPlanFlag(const PlanFlags& flags,
                                                     const core::PlanLimits& limits);

// `base` (LoadPlanFlag's) or the backend's default plan, with the other flags applied.
core::Result<core::Plan> BuildPlan(const PlanFlags& flags, const std::optional<core::Plan>& base,
                                   const std::string& backend, const core::PlanLimits& limits);

}  // namespace ccltune::worker::cli
