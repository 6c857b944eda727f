// Records → the plugin's table (plugin_table.h).
#include "worker/export/plugin_table.h"

#include <algorithm>

#include "core/plan/choice.h"

namespace ccltune::worker::exporting {

apply::WinnerTable PluginTable(const std::vector<core::ResultRecord>& records,
                               std::optional<core::Dtype> pinned, int channel_ceiling) {
  std::vector<apply::WinnerRecord> kept;
  for (const auto& r : records) {
    if (!r.epilogue.none()) continue;  // as WinnerTable::Build drops them in the plugin
    if (auto w = apply::WinnerRecordFrom(r); w.ok()) kept.push_back(std::move(w).value());
  }
  return apply::WinnerTable::Build(std::move(kept), pinned, channel_ceiling);
}

std::size_t CountEpilogueRecords(const std::vector<core::ResultRecord>& records) {
  return static_cast<std::size_t>(
      std::count_if(records.begin(), records.end(),
                    [](const core::ResultRecord& r) { return !r.epilogue.none(); }));
}

bool MeasuredOnHost(const core::ResultRecord& record) {
  return !record.choices.empty() &&
         std::all_of(record.choices.begin(), record.choices.end(), [](const core::ChoiceResult& c) {
           return core::ParseChoice(c.name, "host").ok();
         });
}

std::vector<int> NcclFuncsInOpOrder() {
  std::vector<int> out;
  for (core::Op op : core::AllOps())
    if (const int f = apply::NcclFuncOf(op); f >= 0) out.push_back(f);
  return out;
}

}  // namespace ccltune::worker::exporting
