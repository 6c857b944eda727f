// The tuning plan: the `collectives`, `benchmark`, `search` and `emulatedNodes` part of a
// CollectiveTuningJob spec (docs/design.md §6), read from YAML or JSON, validated field by field. A
// plan that parses is valid: every error names its field path and the allowed values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/plan/epilogue.h"
#include "core/plan/search_mode.h"
#include "core/plan/types.h"

namespace ccltune::core {

struct CollectiveSpec {
  Op op = Op::kAllReduce;
  std::vector<Dtype> dtypes{Dtype::kFp32};
  RedOp reduce_op = RedOp::kSum;     // kNone for non-reducing ops
  std::vector<std::uint64_t> sizes;  // bytes, ascending, deduplicated (ranges expanded)
  std::vector<std::string> choices;  // empty = every applicable choice
  // With an epilogue (allReduce only) the problems are rows of `epilogue.hidden` elements:
  // `tokens` (ascending, deduplicated) replaces `sizes`, and a problem's bytes are
  // tokens x hidden x the dtype's size.
  Epilogue epilogue;
  std::vector<std::uint64_t> tokens;
};

struct BenchmarkSpec {
  int warmup_iters = 5;
  int iters = 20;
  int rounds = 5;
  bool cuda_graph = false;
  double pre_sync_window_seconds = 5;
  double rendezvous_timeout_seconds = 300;
  double choice_timeout_seconds = 30;
  double noise_threshold_percent = 3;
};

// What a CollectiveTuningJob file says beyond the plan, for `ccltune tune --plan job.yaml`:
// spec.backend ("" when absent) and spec.worldSize (0 when absent); both empty for a bare
// plan. PlanToJson leaves them out (the controller reads them from the resource itself).
struct JobTarget {
  bool from_job = false;  // the file was a CollectiveTuningJob (its fields under spec.)
  std::string backend;
  int world_size = 0;
};

struct Plan {
  std::vector<CollectiveSpec> collectives;
  BenchmarkSpec benchmark;
  // Top-level `search` (a CollectiveTuningJob's spec.search): adaptive unless asked otherwise.
  Search search = Search::kAdaptive;
  // Top-level `emulatedNodes` (spec.emulatedNodes, `ccltune tune --emulate-nodes`): split the
  // ranks into this many named nodes of consecutive ranks (core/node/node_name.h), so NCCL joins
  // them with its network transport over this machine's loopback. 0 = off. It must divide
  // the world size, which the plan does not know: checked where that is known.
  int emulated_nodes = 0;
  JobTarget job;  // from a CollectiveTuningJob's spec only
};

// Bounds on user input, so a plan cannot ask for unbounded memory or time.
struct PlanLimits {
  std::uint64_t max_bytes = 1ull << 30;  // largest message size
  std::size_t max_sizes_per_collective = 64;
  std::size_t max_problems = 2048;
  std::size_t max_collectives = 32;
  std::uint64_t max_tokens = 1u << 16;  // rows of an epilogue problem
  int max_iters = 100000;
  int max_rounds = 1000;
  double max_timeout_seconds = 24 * 3600;
  int max_emulated_nodes = 1024;
};

// Parses YAML (JSON is accepted too). `field_prefix` is prepended to field paths in
// errors, e.g. "spec." when the plan comes from a CR.
Result<Plan> ParsePlan(std::string_view text, const PlanLimits& limits = {},
                       const std::string& field_prefix = "");
Result<Plan> LoadPlanFile(const std::string& path, const PlanLimits& limits = {});
// Checks semantic rules of an already-built plan (the same rules ParsePlan applies).
// `backend` ("nccl" | "host" | "" for any) restricts the allowed choice names.
Status ValidatePlan(const Plan& plan, const PlanLimits& limits = {},
                    const std::string& backend = "", const std::string& field_prefix = "");

// Canonical JSON form (what the controller puts in the plan ConfigMap); ParsePlan reads it.
std::string PlanToJson(const Plan& plan);

// The default plan of `ccltune tune` when no --plan is given: allReduce, allGather,
// reduceScatter; fp32; 1KiB..4MiB factor 4 (host) — small enough for a laptop.
Plan DefaultPlan(const std::string& backend);

}  // namespace ccltune::core
