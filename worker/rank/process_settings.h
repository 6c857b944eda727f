// Process settings (core/apply/process_setting.h: NCCL's network transport settings, which
// NCCL reads once per process) measured by rank processes of their own. Each rank of the job
// starts, for each setting in turn, one process of itself (`ccltune worker --measure-setting
// NAME`) with the setting's environment; those processes rendezvous under a job id of their
// own (`{job}:setting{i}`), create their communicator, run the whole §2 protocol on the
// backend's default choice for every problem of the plan, and their rank 0 leaves the usual
// summary in Redis. The job's ranks agree on how each set ended and join the figures to their
// records under the setting's name, so the winner rule sees them like any other choice.
// Why processes started by each rank (and not by the launcher): a pod's ranks start them the
// same way, the GPU binding (local rank), node name and Redis come along, and a setting ends
// with its parent (PR_SET_PDEATHSIG). A setting whose processes fail or overrun their bound
// fails that choice on every problem, not the job.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/plan/problem.h"
#include "core/redis/redis_client.h"
#include "core/results/result.h"
#include "worker/rank/backend.h"
#include "worker/rank/rank_main.h"
#include "worker/rendezvous/job_control.h"
#include "worker/rendezvous/rendezvous.h"

namespace ccltune::worker {

// What the settings' own processes measured, as every rank of the job agreed on it.
class SettingResults {
 public:
  SettingResults() = default;
  explicit SettingResults(std::string backend) : backend_(std::move(backend)) {}

  // `choice`'s result for `problem` when it is a process setting (name and params left to
  // the caller); none when it runs in these processes.
  std::optional<core::ChoiceResult> Find(const core::Problem& problem,
                                         const core::ChoiceName& choice) const;
  // [{name, seconds, status: ok|failed, reason?, ncclTopology?}] for the summary.
  nlohmann::json ToJson() const;

  struct Setting {
    std::string name;
    double seconds = 0;
    std::string failure;  // empty: its processes finished and left their summary
    std::map<std::string, core::ChoiceResult> by_problem;  // Problem::Key()
    nlohmann::json nccl_topology;                          // what NCCL said in them
  };
  void Add(Setting s) { settings_.push_back(std::move(s)); }

 private:
  std::string backend_;
  std::vector<Setting> settings_;
};

// Where the setting processes come from and what they must not inherit.
struct SettingsLaunch {
  const RankConfig& cfg;
  std::string node;                    // this rank's settled node name
  std::vector<std::string> unset_env;  // e.g. the NCCL log capture's variables
};

// Blocks: every process setting that some problem's candidates offer (applicable), one after
// the other, each in a fresh set of rank processes bounded by SettingBoundSeconds. Error only
// when the job cannot go on (a peer of the job lost, the agreement's deadline).
core::Result<SettingResults> MeasureProcessSettings(const SettingsLaunch& launch, Backend& backend,
                                                    Rendezvous& rendezvous, JobControl& control,
                                                    core::RedisClient& redis,
                                                    const std::vector<core::Problem>& problems);

// The longest one set of setting processes may take: its rendezvous, communicator and
// pre-sync window, and every problem's measurement with a timeout's recovery.
double SettingBoundSeconds(const core::BenchmarkSpec& bench, std::size_t problems);

// In a setting's own process (cfg.measure_setting set): checks the name, narrows the plan to
// the measured default choice (exhaustive: one choice, nothing to screen), keeps the
// node name the parent settled, publishes and serves nothing, and ends with the parent.
core::Status EnterSettingProcess(RankConfig& cfg);

}  // namespace ccltune::worker
