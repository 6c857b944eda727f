// Process settings measured by rank processes of their own (process_settings.h).
#include "worker/rank/process_settings.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/apply/process_setting.h"
#include "core/base/log.h"
#include "core/redis/job_keys.h"
#include "worker/launcher/child_process.h"
#include "worker/rank/temp_file.h"

namespace ccltune::worker {
namespace {

using core::Status;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Every applicable process setting of the problems' candidates, in the order first offered:
// the same on every rank (same plan, same catalog, same node span).
std::vector<core::ChoiceName> SettingsToRun(Backend& backend,
                                            const std::vector<core::Problem>& problems) {
  std::vector<core::ChoiceName> out;
  for (const core::Problem& p : problems) {
    for (const ChoiceCandidate& c : backend.Candidates(p)) {
      if (!c.applicable() || !apply::ProcessSettingOf(c.name, backend.name())) continue;
      const std::string name = c.name.ToString();
      bool seen = false;
      for (const auto& o : out) seen = seen || o.ToString() == name;
      if (!seen) out.push_back(c.name);
    }
  }
  return out;
}

// The last non-empty line a failed process wrote: its own one clear error line.
std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last.empty() ? "no output" : last;
}

struct Child {
  std::string job_id;  // the setting processes' own job
  std::string log;     // their output (this rank's process)
};

core::Result<ChildProcess> SpawnSetting(const SettingsLaunch& l, const Child& child,
                                        const core::ChoiceName& name,
                                        const apply::ProcessSetting& setting) {
  const RankConfig& c = l.cfg;
  core::RedisEndpoint no_password = c.redis;
  no_password.password.clear();
  const std::vector<std::string> argv{SelfExecutable(), "worker",
                                      "--rank",         std::to_string(c.rank),
                                      "--local-rank",   std::to_string(c.local_rank),
                                      "--world-size",   std::to_string(c.world_size),
                                      "--job-id",       child.job_id,
                                      "--attempt",      std::to_string(c.attempt),
                                      "--backend",      c.backend,
                                      "--redis",        no_password.ToString(),
                                      "--plan",         c.plan_file,
                                      "--listen-host",  c.listen_host,
                                      "--node-name",    l.node,
                                      "--no-publish",   "--measure-setting",
                                      name.ToString()};
  std::map<std::string, std::string> env(setting.env.begin(), setting.env.end());
  if (!c.redis.password.empty()) env["CCLTUNE_REDIS_PASSWORD"] = c.redis.password;
  // A pod's metrics port and Pushgateway belong to its ranks, not to these processes.
  std::vector<std::string> unset = l.unset_env;
  unset.insert(unset.end(), {"CCLTUNE_METRICS_PORT", "CCLTUNE_PUSHGATEWAY"});
  // Ends with the rank that started it, even when that rank is killed.
  return ChildProcess::Spawn(argv, SpawnOptions{env, unset, child.log, SIGKILL});
}

// This rank's process of one setting, to its end: "" when it exited 0, else why not. Error
// only when the job itself failed meanwhile (then the process is stopped).
core::Result<std::string> RunOwnProcess(const SettingsLaunch& l, const Child& child,
                                        const core::ChoiceName& name,
                                        const apply::ProcessSetting& setting, JobControl& control,
                                        double bound_seconds) {
  auto proc = SpawnSetting(l, child, name, setting);
  if (!proc.ok()) return proc.status().message();
  const Deadline deadline = DeadlineIn(bound_seconds);
  while (true) {
    if (std::optional<int> code = proc->Poll()) {
      if (*code == 0) return std::string();
      return "exit code " + std::to_string(*code) + ": " + LastLine(child.log) + " (log " +
             child.log + ")";
    }
    if (Status st = control.Fatal(); !st.ok()) {
      proc->Stop(5);
      return st;
    }
    if (Expired(deadline)) {
      proc->Stop(5);
      return "did not finish within " + std::to_string(static_cast<int>(bound_seconds)) +
             " s; stopped (log " + child.log + ")";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The figures of the default choice in the setting processes' summary, by problem.
Status ReadFigures(core::RedisClient& redis, const std::string& job_id, int attempt,
                   const std::string& measured_as, SettingResults::Setting& out) {
  const core::JobKeys keys(job_id, attempt);
  CCLTUNE_ASSIGN_OR_RETURN(auto text, redis.Command({"GET", keys.Summary()}));
  if (text.is_nil()) return core::DataLoss("its processes finished but left no summary");
  const auto summary = nlohmann::json::parse(text.str, nullptr, false);
  if (summary.is_discarded() || !summary.contains("records"))
    return core::DataLoss("its summary is not the summary JSON");
  for (const auto& j : summary.at("records")) {
    CCLTUNE_ASSIGN_OR_RETURN(core::ResultRecord rec, core::ResultFromJson(j));
    for (const core::ChoiceResult& c : rec.choices)
      if (c.name == measured_as) out.by_problem[rec.Key()] = c;
  }
  if (summary.contains("ncclTopology")) out.nccl_topology = summary.at("ncclTopology");
  return Status::Ok();
}

// What every setting of one job's run shares.
struct SettingsRun {
  const SettingsLaunch& launch;
  std::string backend;
  Rendezvous& rendezvous;
  JobControl& control;
  core::RedisClient& redis;
  std::size_t problems;
  std::size_t settings;
};

// The launcher's progress line while setting `i` runs (rank 0; best effort).
void ShowProgress(const SettingsRun& run, std::size_t i, const core::ChoiceName& name) {
  if (run.launch.cfg.rank != 0) return;
  (void)run.redis.Command({"SET", run.rendezvous.keys().Progress(),
                           "0 " + std::to_string(run.problems) + " process setting " +
                               std::to_string(i + 1) + "/" + std::to_string(run.settings) + ": " +
                               name.ToString(),
                           "EX", "3600"});
}

// Setting `i`: this rank's process of it, the ranks' agreement on how the set ended, and its
// figures (or its failure, the same on every rank).
core::Result<SettingResults::Setting> MeasureOne(const SettingsRun& run, std::size_t i,
                                                 const core::ChoiceName& name) {
  const SettingsLaunch& l = run.launch;
  const auto t0 = Clock::now();
  const double bound = SettingBoundSeconds(l.cfg.plan.benchmark, run.problems);
  const apply::ProcessSetting setting = *apply::ProcessSettingOf(name, run.backend);
  const std::string job = l.cfg.job_id + ":setting" + std::to_string(i);
  const Child child{job, TempFilePath("ccltune-" + job + "-a" + std::to_string(l.cfg.attempt) +
                                      "-r" + std::to_string(l.cfg.rank) + ".log")};
  core::LogInfo(name.ToString() + ": its own rank processes, job " + job);
  ShowProgress(run, i, name);
  CCLTUNE_ASSIGN_OR_RETURN(std::string mine,
                           RunOwnProcess(l, child, name, setting, run.control, bound));
  SettingResults::Setting s{name.ToString()};
  // Every rank's outcome: the first failure in rank order, or none.
  CCLTUNE_ASSIGN_OR_RETURN(
      s.failure, core::FirstRankProblem(run.rendezvous, "setting" + std::to_string(i), mine,
                                        "process", DeadlineIn(bound + 60)));
  if (s.failure.empty()) {
    if (Status st = ReadFigures(run.redis, job, l.cfg.attempt, setting.measured_as, s); !st.ok())
      s.failure = st.message();
  }
  if (mine.empty()) std::filesystem::remove(child.log);  // kept where it says why
  if (!s.failure.empty()) core::LogWarn(s.name + ": " + s.failure);
  s.seconds = Since(t0);
  return s;
}

}  // namespace

std::optional<core::ChoiceResult> SettingResults::Find(const core::Problem& problem,
                                                       const core::ChoiceName& choice) const {
  if (!apply::ProcessSettingOf(choice, backend_)) return std::nullopt;
  core::ChoiceResult r;
  r.status = core::ChoiceStatus::kFailed;
  const std::string name = choice.ToString();
  for (const Setting& s : settings_) {
    if (s.name != name) continue;
    if (!s.failure.empty()) {
      r.reason = "its own rank processes failed: " + s.failure;
      return r;
    }
    auto it = s.by_problem.find(problem.Key());
    if (it != s.by_problem.end()) return it->second;
    r.reason = "its own rank processes reported no figure for " + problem.Key();
    return r;
  }
  r.reason = "no rank processes of its own ran for it";
  return r;
}

nlohmann::json SettingResults::ToJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const Setting& s : settings_) {
    nlohmann::json j = {
        {"name", s.name}, {"seconds", s.seconds}, {"status", s.failure.empty() ? "ok" : "failed"}};
    if (!s.failure.empty()) j["reason"] = s.failure;
    if (!s.nccl_topology.is_null()) j["ncclTopology"] = s.nccl_topology;
    out.push_back(std::move(j));
  }
  return out;
}

double SettingBoundSeconds(const core::BenchmarkSpec& b, std::size_t problems) {
  return 2 * b.rendezvous_timeout_seconds + b.pre_sync_window_seconds + 20 +
         static_cast<double>(problems + 1) * (2 * b.choice_timeout_seconds + 5);
}

core::Result<SettingResults> MeasureProcessSettings(const SettingsLaunch& l, Backend& backend,
                                                    Rendezvous& rendezvous, JobControl& control,
                                                    core::RedisClient& redis,
                                                    const std::vector<core::Problem>& problems) {
  SettingResults results(backend.name());
  const std::vector<core::ChoiceName> names = SettingsToRun(backend, problems);
  const SettingsRun run{l,     backend.name(),  rendezvous,  control,
                        redis, problems.size(), names.size()};
  for (std::size_t i = 0; i < names.size(); ++i) {
    CCLTUNE_ASSIGN_OR_RETURN(SettingResults::Setting s, MeasureOne(run, i, names[i]));
    results.Add(std::move(s));
  }
  return results;
}

Status EnterSettingProcess(RankConfig& cfg) {
  CCLTUNE_ASSIGN_OR_RETURN(core::ChoiceName name, core::ParseChoice(cfg.measure_setting));
  std::optional<apply::ProcessSetting> setting = apply::ProcessSettingOf(name, cfg.backend);
  if (!setting) {
    return core::InvalidArgument("--measure-setting '" + cfg.measure_setting +
                                 "' is not a process setting of backend " + cfg.backend);
  }
  for (core::CollectiveSpec& c : cfg.plan.collectives) c.choices = {setting->measured_as};
  cfg.plan.search = core::Search::kExhaustive;
  cfg.plan.emulated_nodes = 0;  // --node-name carries the parent's (emulated) node
  cfg.publish = false;
  cfg.metrics_port = -1;
  cfg.pushgateway.clear();
  cfg.report_file.clear();
  return Status::Ok();
}

}  // namespace ccltune::worker
