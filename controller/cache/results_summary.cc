#include "controller/cache/results_summary.h"

#include <cmath>
#include <utility>

#include "core/node/nccl_init_log.h"
#include "core/plan/types.h"
#include "core/results/result.h"

namespace ccltune::controller {

using Json = nlohmann::json;

namespace {

// The ranks' node count as the workers grouped them (distinct spec.nodeName of their pods)
// and, on the nccl backend, what NCCL's own log says it formed.
void FillNodes(Json& results, const Json& summary) {
  const Json& fp = summary.value("fingerprintInfo", Json::object());
  if (fp.contains("nodes")) results["nodes"] = fp.value("nodes", 0);
  if (fp.contains("gpusPerNode")) results["gpusPerNode"] = fp.value("gpusPerNode", 0);
  if (!summary.contains("ncclTopology")) return;
  const Json& t = summary.at("ncclTopology");
  results["ncclTopology"] =
      t.contains("problem") ? "unknown: " + t.value("problem", "") : core::DescribeNcclTopology(t);
}

// The status is read by people (`kubectl get ctj`'s Speedup column, `describe`): figures at
// the tune table's precision, not a double's 16 digits. The records keep full precision.
// Dividing by the scale (not multiplying by its inverse) gives the double nearest the decimal,
// which JSON then prints in its shortest form ("405.76").
double Rounded(double v, double scale) { return std::round(v * scale) / scale; }
constexpr double kSpeedupScale = 100;  // 3.91x
constexpr double kTimeScaleUs = 100;   // 405.76 us

}  // namespace

core::Status FillResults(Json& status, const Json& summary) {
  Json winners = Json::array();
  double log_sum = 0;
  int n = 0;
  const Json& records = summary.value("records", Json::array());
  for (size_t i = 0; i < records.size(); ++i) {
    auto r = core::ResultFromJson(records[i]);
    if (!r.ok()) {
      return core::DataLoss("summary records[" + std::to_string(i) + "]: " + r.status().message());
    }
    if (r->speedup_vs_default > 0) {
      log_sum += std::log(r->speedup_vs_default);
      ++n;
    }
    if (winners.size() < kMaxWinners) {
      Json w = {{"op", core::OpName(r->op)}, {"dtype", core::DtypeName(r->dtype)},
                {"bytes", r->bytes},         {"choice", r->winner},
                {"timeUs", Rounded(r->time_us, kTimeScaleUs)},
                {"speedup", Rounded(r->speedup_vs_default, kSpeedupScale)}};
      // Absent means none, as in result records: plain jobs' status stays as it was.
      if (!r->epilogue.none()) w["epilogue"] = r->epilogue.Label();
      winners.push_back(std::move(w));
    }
  }
  status["fingerprint"] = summary.value("fingerprint", "");
  const Json& presync = summary.value("presync", Json::object());
  status["preSync"] = {{"waitMs", presync.value("waitMs", 0.0)},
                       {"skewMs", presync.value("skewMs", 0.0)}};
  status["results"] = {{"problems", summary.value("problems", static_cast<int>(records.size()))},
                       {"published", summary.value("published", 0)},
                       {"speedupGeomean",
                        Rounded(n ? std::exp(log_sum / n) : 1.0, kSpeedupScale)},
                       {"winners", winners}};
  FillNodes(status["results"], summary);
  return core::Status::Ok();
}

}  // namespace ccltune::controller
