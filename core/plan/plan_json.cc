// PlanToJson: the canonical plan (what the controller stores in the plan ConfigMap and what
// workers read back with ParsePlan). Sizes are written as byte counts so nothing is lost.
#include <nlohmann/json.hpp>

#include "core/plan/plan.h"

namespace ccltune::core {

std::string PlanToJson(const Plan& plan) {
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& c : plan.collectives) {
    nlohmann::json dtypes = nlohmann::json::array();
    for (Dtype d : c.dtypes) dtypes.push_back(DtypeName(d));
    nlohmann::json j{{"op", OpName(c.op)}, {"dtypes", dtypes}, {"choices", c.choices}};
    if (c.epilogue.none()) {
      j["sizes"] = c.sizes;
    } else {
      j["epilogue"] = EpilogueToJson(c.epilogue);
      j["tokens"] = c.tokens;
    }
    if (IsReducing(c.op)) j["reduceOp"] = RedOpName(c.reduce_op);
    collectives.push_back(std::move(j));
  }
  const BenchmarkSpec& b = plan.benchmark;
  nlohmann::json bench{{"warmupIters", b.warmup_iters},
                       {"iters", b.iters},
                       {"rounds", b.rounds},
                       {"cudaGraph", b.cuda_graph},
                       {"preSyncWindowSeconds", b.pre_sync_window_seconds},
                       {"rendezvousTimeoutSeconds", b.rendezvous_timeout_seconds},
                       {"choiceTimeoutSeconds", b.choice_timeout_seconds},
                       {"noiseThresholdPercent", b.noise_threshold_percent}};
  nlohmann::json out{
      {"collectives", collectives}, {"benchmark", bench}, {"search", SearchName(plan.search)}};
  // Only when on, so plans without it keep their canonical text.
  if (plan.emulated_nodes > 0) out["emulatedNodes"] = plan.emulated_nodes;
  return out.dump();
}

}  // namespace ccltune::core
