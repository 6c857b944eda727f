// The plugin's applied choices as JSON (applied_json.h).
#include "worker/export/applied_json.h"

#include "core/apply/forced_choice.h"
#include "worker/export/plugin_table.h"

namespace ccltune::worker::exporting {
namespace {

nlohmann::json EntryJson(const apply::TableEntry& e) {
  const apply::WinnerRecord& r = e.record;
  const apply::AppliedChoice& a = e.applied;
  const bool forces_algo = a.forced.algo >= 0;
  return {{"op", core::OpName(r.op)},
          {"dtype", core::DtypeName(r.dtype)},
          {"redop", core::RedOpName(r.redop)},
          {"bytes", r.bytes},
          {"winner", r.winner},
          {"applied", a.name},
          {"appliedTimeUs", a.time_us > 0 ? nlohmann::json(a.time_us) : nlohmann::json(nullptr)},
          {"substituted", a.substituted},
          {"algo", forces_algo ? nlohmann::json(apply::AlgoName(a.forced.algo)) : nullptr},
          {"proto", forces_algo ? nlohmann::json(apply::ProtoName(a.forced.proto)) : nullptr},
          {"channels", a.forced.channels},
          {"reason", a.reason}};
}

}  // namespace

nlohmann::json AppliedJson(const std::vector<core::ResultRecord>& records,
                           std::optional<core::Dtype> pinned, int channel_ceiling) {
  const apply::WinnerTable table = PluginTable(records, pinned, channel_ceiling);
  nlohmann::json sizes = nlohmann::json::array();
  for (int func : NcclFuncsInOpOrder())
    for (const auto& e : table.Entries(func)) sizes.push_back(EntryJson(e));
  return {{"minCtas", channel_ceiling}, {"sizes", sizes}};
}

}  // namespace ccltune::worker::exporting
