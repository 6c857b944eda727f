// Records → the plugin's table (plugin_table.h).
#include "worker/export/plugin_table.h"

namespace ccltune::worker::exporting {

apply::WinnerTable PluginTable(const std::vector<core::ResultRecord>& records,
                                std::optional<core::Dtype> pinned, int channel_ceiling) {
  std::vector<apply::WinnerRecord> kept;
  for (const auto& r : records)
    if (auto w = apply::WinnerRecordFrom(r); w.ok()) kept.push_back(std::move(w).value());
  return apply::WinnerTable::Build(std::move(kept), pinned, channel_ceiling);
}

std::vector<int> NcclFuncsInOpOrder() {
  std::vector<int> out;
  for (core::Op op : core::AllOps())
    if (const int f = apply::NcclFuncOf(op); f >= 0) out.push_back(f);
  return out;
}

}  // namespace ccltune::worker::exporting
