// The Programs dashboard (dashboards/ccltune-programs.json):
//  - its static shape (variables, units, data source);
//  - its queries on series in the shape of docs/design.md §13 that this test writes itself
//    (two communicators, each with a known late rank; OpenMetrics backfilled into a real
//    Prometheus with `promtool tsdb create-blocks-from openmetrics`): every panel returns
//    finite data, the last-arriving rank of each communicator is named, and the per-rank
//    means and ratios equal what was written. Checks the PromQL, not the library.
//  - against real telemetry, where libccltune-telemetry is built: three rank processes of
//  program_ranks (one communicator; rank kLateRank arrives kDelayUs late at
// every call) record their calls through libccltune-telemetry's C ABI and serve /metrics
// themselves (CCLTUNE_TELEMETRY=on, port CCLTUNE_METRICS_PORT + LOCAL_RANK, namespace and pod
// from CCLTUNE_POD_NAMESPACE / CCLTUNE_POD_NAME as the webhook sets them); a real `prometheus`
// scrapes them. Then every panel query, with its variables resolved as Grafana does, must
// return finite data, the last-arriving-rank panel must name the late rank, and its peers'
// mean sync wait must show the delay.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/metrics/child_process.h"
#include "tests/metrics/dashboard_queries.h"
#include "tests/metrics/prom_servers.h"
#include "tests/support/temp_dir.h"
#include "worker/launcher/child_process.h"

namespace ccltune::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr int kRanks = 3;
constexpr char kNamespace[] = "team-a";

std::string PodOf(int rank) { return "trainer-" + std::to_string(rank); }

json PanelNamed(const json& dash, const std::string& title) {
  for (const auto& panel : AllPanels(dash))
    if (panel.value("title", "") == title) return panel;
  ADD_FAILURE() << "no panel '" << title << "'";
  return json::object();
}

// One panel's first query, its variables filled, evaluated at `at`: its result vector.
json PanelResult(int port, const json& dash, const std::string& title,
                 const std::map<std::string, std::string>& values, const std::string& at) {
  auto data = Query(port, Substitute(PanelNamed(dash, title)["targets"][0]["expr"], values), at);
  EXPECT_TRUE(data.ok()) << title << ": " << data.status().ToString();
  return data.ok() ? (*data)["result"] : json::array();
}

TEST(ProgramsDashboard, VariablesUnitsAndDataSource) {
  const json dash = LoadDashboard("ccltune-programs");
  EXPECT_EQ(dash["title"], "ccltune / Programs");
  for (const auto& p : StaticProblems(dash, {"datasource", "namespace", "pod", "comm"}))
    ADD_FAILURE() << p;
  for (const auto& panel : AllPanels(dash))
    for (const auto& t : panel.value("targets", json::array()))
      EXPECT_NE(t.value("expr", "").find("ccltune_program_"), std::string::npos)
          << panel["title"] << ": not over a design §13 family";
}

// --- Series of design §13, written by this test -----------------------------------------
// Per communicator, three ranks (pods trainer-0..2), each making 1 call/s of a 64 KiB bf16
// all-reduce with one choice; the late rank waits kLateWait per call, the others kWait; every
// call transfers for kTransfer; the winner was tuned at kTuned. Sampled every 15 s for 20 min.
struct BackfillComm {
  const char* hash;
  int late_rank;
};
const BackfillComm kBackfillComms[] = {{"00000000c0ffee01", 1}, {"00000000c0ffee02", 0}};
constexpr double kWait = 0.005, kLateWait = 0.00001, kTransfer = 0.005, kTuned = 0.004;
constexpr int kSamples = 81, kStep = 15;

// One series' samples, counters growing by `per_call` each call (15 calls a step).
void Lines(std::ostream& out, const std::string& name, const std::string& labels, double per_call,
           long t0, bool gauge = false) {
  for (int k = 0; k < kSamples; ++k)
    out << name << "{" << labels << "} " << (gauge ? per_call : per_call * 15 * k) << " "
        << t0 + k * kStep << "\n";
}

// OpenMetrics text of every §13 family for kBackfillComms, from Unix second t0. A family's
// samples must be contiguous: loop families first, series inside.
std::string BackfillText(long t0) {
  std::ostringstream out;
  out.precision(17);
  auto each = [&](const std::function<void(const std::string&, bool, const std::string&)>& f) {
    for (const auto& c : kBackfillComms)
      for (int r = 0; r < kRanks; ++r)
        f("namespace=\"" + std::string(kNamespace) + "\",pod=\"" + PodOf(r) +
              "\",node=\"node-a\",comm=\"" + c.hash + "\",rank=\"" + std::to_string(r) + "\"",
          r == c.late_rank, PodOf(r));
  };
  const std::string call = ",op=\"allReduce\",dtype=\"bf16\",size=\"64KiB\",choice=\"oneshot\"";
  auto histogram = [&](const std::string& family, const std::string& extra,
                       const std::function<double(bool)>& per_call) {
    for (const char* le : {"1e-05", "0.005", "0.01", "+Inf"})
      each([&](const std::string& l, bool late, const std::string&) {
        Lines(out, family + "_bucket", l + call + extra + ",le=\"" + le + "\"",
              per_call(late) <= std::stod(le == std::string("+Inf") ? "1e9" : le) ? 1 : 0, t0);
      });
    each([&](const std::string& l, bool late, const std::string&) {
      Lines(out, family + "_sum", l + call + extra, per_call(late), t0);
    });
    each([&](const std::string& l, bool, const std::string&) {
      Lines(out, family + "_count", l + call + extra, 1, t0);
    });
  };
  histogram("ccltune_program_collective_seconds", ",source=\"ccltune\"",
            [](bool late) { return (late ? kLateWait : kWait) + kTransfer; });
  histogram("ccltune_program_sync_wait_seconds", ",method=\"kernel\"",
            [](bool late) { return late ? kLateWait : kWait; });
  histogram("ccltune_program_transfer_seconds", ",method=\"kernel\"",
            [](bool) { return kTransfer; });
  each([&](const std::string& l, bool, const std::string&) {
    Lines(out, "ccltune_program_calls_total",
          l + ",op=\"allReduce\",choice=\"oneshot\",source=\"ccltune\"", 1, t0);
  });
  each([&](const std::string& l, bool late, const std::string&) {
    const double wait = late ? kLateWait : kWait;
    Lines(out, "ccltune_program_sync_wait_ratio", l, wait / (wait + kTransfer), t0, true);
  });
  each([&](const std::string& l, bool, const std::string&) {
    // The tuned gauge has no rank: drop it from the labels.
    Lines(out, "ccltune_program_tuned_seconds", l.substr(0, l.find(",rank=")) + call, kTuned, t0,
          true);
  });
  for (int r = 0; r < kRanks; ++r) {
    const std::string l = "namespace=\"" + std::string(kNamespace) + "\",pod=\"" + PodOf(r) + "\"";
    Lines(out, "ccltune_program_forwarded_calls_total", l + ",reason=\"in-group\"", 0.1, t0);
  }
  for (int r = 0; r < kRanks; ++r) {
    const std::string l = "namespace=\"" + std::string(kNamespace) + "\",pod=\"" + PodOf(r) + "\"";
    Lines(out, "ccltune_program_telemetry_dropped_total", l + ",what=\"kernel-ring-full\"", 1, t0,
          true);
  }
  out << "# EOF\n";
  return out.str();
}

TEST(ProgramsDashboard, EveryQueryOnBackfilledSeriesNamesEachCommunicatorsLateRank) {
  TempDir prom_dir("ccltune-prom");
  const long t0 = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count() -
                  3600;
  std::ofstream(prom_dir.File("series.om")) << BackfillText(t0);
  auto blocks = RunCommand({"promtool", "tsdb", "create-blocks-from", "openmetrics",
                            prom_dir.File("series.om"), prom_dir.File("data")},
                           "", 120s);
  ASSERT_TRUE(blocks.ok()) << blocks.status().ToString();
  ASSERT_EQ(blocks->exit_code, 0) << blocks->output;
  auto prom = StartPrometheus(prom_dir, "global: {scrape_interval: 15s}\nscrape_configs: []\n");
  ASSERT_TRUE(prom.ok()) << prom.status().ToString();
  const std::string at = std::to_string(t0 + (kSamples - 1) * kStep);

  const json dash = LoadDashboard("ccltune-programs");
  for (bool use_all : {false, true}) {
    auto values = ResolveVariables(prom->port, dash, use_all, {});
    ASSERT_TRUE(values.ok()) << values.status().ToString();
    (*values)["__rate_interval"] = "1m";
    int queries = 0;
    for (const auto& p : CheckPanels(prom->port, dash, *values, at, queries)) ADD_FAILURE() << p;
    EXPECT_GE(queries, 12);
  }
  const std::map<std::string, std::string> all = {
      {"namespace", ".*"}, {"pod", ".*"}, {"comm", ".*"}, {"__rate_interval", "1m"}};
  std::map<std::string, std::string> late;  // comm → "pod rank"
  for (const auto& s : PanelResult(prom->port, dash, "Last-arriving rank (now)", all, at))
    late[s["metric"]["comm"]] = s["metric"].value("pod", "") + " " + s["metric"].value("rank", "");
  EXPECT_EQ(late, (std::map<std::string, std::string>{{"00000000c0ffee01", "trainer-1 1"},
                                                      {"00000000c0ffee02", "trainer-0 0"}}));
  auto expect_each = [&](const std::string& title, const std::function<double(bool)>& want) {
    const json result = PanelResult(prom->port, dash, title, all, at);
    EXPECT_EQ(result.size(), 6u) << title << ": " << result.dump();
    for (const auto& s : result) {
      const bool is_late = s["metric"]["comm"] == "00000000c0ffee01" ? s["metric"]["rank"] == "1"
                                                                     : s["metric"]["rank"] == "0";
      EXPECT_NEAR(std::stod(s["value"][1].get<std::string>()), want(is_late), 1e-9)
          << title << ": " << s.dump();
    }
  };
  expect_each("Sync overhead per rank", [](bool l) {
    const double wait = l ? kLateWait : kWait;
    return wait / (wait + kTransfer);
  });
  expect_each("Mean sync wait per call, per rank", [](bool l) { return l ? kLateWait : kWait; });
  const json ratio = PanelResult(prom->port, dash, "Transfer time / tuned time", all, at);
  ASSERT_EQ(ratio.size(), 2u) << ratio.dump();  // one per communicator
  for (const auto& s : ratio)
    EXPECT_NEAR(std::stod(s["value"][1].get<std::string>()), kTransfer / kTuned, 1e-9) << s.dump();
}

#ifdef CCLTUNE_TEST_HAVE_TELEMETRY
// --- Real rank processes exporting through libccltune-telemetry ---------------------------
constexpr int kLateRank = 1;    // neither the first nor the last label value
constexpr int kDelayUs = 5000;  // far above the scheduling noise of a loaded 2-core machine
constexpr char kRateInterval[] = "10s";  // Grafana's $__rate_interval at a 1 s scrape is 4 s

struct Rank {
  std::string log;
  std::optional<worker::ChildProcess> process;
};

core::Result<std::vector<Rank>> StartRanks(int port_base, const TempDir& dir) {
  const char* bin = std::getenv("CCLTUNE_PROGRAM_RANKS_BIN");
  if (!bin || !*bin) return core::FailedPrecondition("CCLTUNE_PROGRAM_RANKS_BIN is not set");
  std::vector<Rank> ranks(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    ranks[r].log = dir.File("rank" + std::to_string(r) + ".log");
    const std::map<std::string, std::string> env = {
        {"CCLTUNE_TELEMETRY", "on"},       {"CCLTUNE_METRICS_PORT", std::to_string(port_base)},
        {"LOCAL_RANK", std::to_string(r)}, {"CCLTUNE_POD_NAMESPACE", kNamespace},
        {"CCLTUNE_POD_NAME", PodOf(r)},    {"CCLTUNE_NODE_NAME", "node-a"}};
    CCLTUNE_ASSIGN_OR_RETURN(
        auto child, worker::ChildProcess::Spawn(
                        {bin, "--rank", std::to_string(r), "--ranks", std::to_string(kRanks),
                         "--barrier", dir.File("barrier"), "--late-rank", std::to_string(kLateRank),
                         "--delay-us", std::to_string(kDelayUs), "--seconds", "120"},
                        env, ranks[r].log, {"CCLTUNE_PUSHGATEWAY", "CCLTUNE_REDIS_URL"}));
    ranks[r].process.emplace(std::move(child));
  }
  return ranks;
}

std::string PrometheusConfig(int port_base) {
  std::string targets;
  for (int r = 0; r < kRanks; ++r)
    targets += (r ? ", '" : "'") + std::string("127.0.0.1:") + std::to_string(port_base + r) + "'";
  return "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
         "scrape_configs:\n"
         "- job_name: ccltune-programs\n"
         "  static_configs: [{targets: [" +
         targets + "]}]\n";
}

std::string Logs(std::vector<Rank>& ranks) {
  std::string out;
  for (int r = 0; r < kRanks; ++r)
    out += "--- rank " + std::to_string(r) + ":\n" + ReadTail(ranks[r].log);
  return out;
}

// Until every rank has been scraped with calls often enough for the panels' rates (a window
// of kRateInterval holds several samples), while all ranks run; returns that moment.
core::Result<std::string> WaitForCalls(int prom_port, std::vector<Rank>& ranks, double seconds) {
  const std::string samples = std::string("count_over_time(ccltune_program_calls_total{") +
                              "namespace=\"" + kNamespace + "\"}[" + kRateInterval + "]) >= 6";
  const worker::Deadline deadline = worker::DeadlineIn(seconds);
  std::size_t seen = 0;
  while (!worker::Expired(deadline)) {
    for (int r = 0; r < kRanks; ++r)
      if (auto code = ranks[r].process->Poll())
        return core::Internal("rank " + std::to_string(r) + " exited (code " +
                              std::to_string(*code) + ") before Prometheus had its calls");
    const std::string at = UnixNow();
    seen = SeriesCount(prom_port, samples, at);
    if (seen >= kRanks * 2) return at;  // 2 problems (sizes and choices) per rank
    std::this_thread::sleep_for(250ms);
  }
  return core::TimeoutError("Prometheus had " + std::to_string(seen) + " of " +
                            std::to_string(kRanks * 2) + " call series with enough samples");
}

TEST(ProgramsDashboard, EveryPanelQueryReturnsDataAndTheLateRankIsNamed) {
  TempDir prom_dir("ccltune-prom"), rank_dir("ccltune-program-ranks");
  const int base = FreePortRange(kRanks);
  ASSERT_NE(base, 0) << "no " << kRanks << " consecutive free ports";
  auto prom = StartPrometheus(prom_dir, PrometheusConfig(base));
  ASSERT_TRUE(prom.ok()) << prom.status().ToString();
  auto ranks = StartRanks(base, rank_dir);
  ASSERT_TRUE(ranks.ok()) << ranks.status().ToString();

  auto at = WaitForCalls(prom->port, *ranks, 60);
  ASSERT_TRUE(at.ok()) << at.status().ToString() << "\n"
                       << Logs(*ranks) << "\nprometheus: " << prom->process->LogTail();

  const json dash = LoadDashboard("ccltune-programs");
  for (bool use_all : {false, true}) {
    auto values = ResolveVariables(prom->port, dash, use_all, {});
    ASSERT_TRUE(values.ok()) << values.status().ToString();
    (*values)["__rate_interval"] = kRateInterval;
    EXPECT_EQ(values->at("namespace"), use_all ? ".*" : kNamespace);
    int queries = 0;
    for (const auto& p : CheckPanels(prom->port, dash, *values, *at, queries)) ADD_FAILURE() << p;
    EXPECT_GE(queries, 12);
    std::fprintf(stderr, "ccltune-programs (%s): %d panel queries checked\n",
                 use_all ? "All" : "first values", queries);
  }

  // The last-arriving rank, with every pod shown: the late one, alone for its communicator.
  std::map<std::string, std::string> all = {
      {"namespace", ".*"}, {"pod", ".*"}, {"comm", ".*"}, {"__rate_interval", kRateInterval}};
  const json last = PanelNamed(dash, "Last-arriving rank (now)");
  auto named = Query(prom->port, Substitute(last["targets"][0]["expr"], all), *at);
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  ASSERT_EQ((*named)["result"].size(), 1u) << named->dump();
  EXPECT_EQ((*named)["result"][0]["metric"].value("rank", ""), std::to_string(kLateRank))
      << named->dump();
  EXPECT_EQ((*named)["result"][0]["metric"].value("pod", ""), PodOf(kLateRank)) << named->dump();

  // Its peers waited about the delay for it each call (a peer descheduled after a barrier
  // enters later and waits less: hence half, on a loaded machine); it waited next to nothing.
  const json mean = PanelNamed(dash, "Mean sync wait per call, per rank");
  auto waits = Query(prom->port, Substitute(mean["targets"][0]["expr"], all), *at);
  ASSERT_TRUE(waits.ok()) << waits.status().ToString();
  ASSERT_EQ((*waits)["result"].size(), static_cast<std::size_t>(kRanks)) << waits->dump();
  for (const auto& s : (*waits)["result"]) {
    const double wait = std::stod(s["value"][1].get<std::string>());
    EXPECT_EQ(s["metric"].value("method", ""), "kernel") << s.dump();
    if (s["metric"].value("rank", "") == std::to_string(kLateRank)) {
      EXPECT_LT(wait, kDelayUs * 0.2e-6) << s.dump();
    } else {
      EXPECT_GT(wait, kDelayUs * 0.5e-6) << s.dump();
    }
  }

  for (auto& r : *ranks) r.process->Signal(SIGTERM);
  for (int r = 0; r < kRanks; ++r) {
    auto code = (*ranks)[r].process->Wait(worker::DeadlineIn(15));
    ASSERT_TRUE(code.ok()) << "rank " << r << " did not stop on SIGTERM\n" << Logs(*ranks);
    EXPECT_EQ(*code, 0) << "rank " << r << "\n" << Logs(*ranks);
  }
}

#else
TEST(ProgramsDashboard, EveryPanelQueryReturnsDataAndTheLateRankIsNamed) {
  GTEST_SKIP() << "libccltune-telemetry (target ccltune_telemetry) is not built: the Programs "
                  "dashboard was not checked against real telemetry processes";
}
#endif

}  // namespace
}  // namespace ccltune::testing
