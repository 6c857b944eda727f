// One communicator's state in the plugin (what NCCL's `void* ctx` points to): its
// fingerprint, the winner table, and NCCL's logger. Built once at init, read-only after,
// so getCollInfo may run on any thread. Never fails: any problem is logged and leaves an
// empty table, which means NCCL's own choices.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/apply/tuner_abi.h"
#include "core/apply/winner_table.h"

namespace ccltune::plugin {

// The plugin's names for what it shares with the runtime and `ccltune export` (core/apply/).
namespace abi = apply::abi;
using apply::EntryName;
using apply::ForcedChoice;
using apply::TableEntry;
using apply::WinnerTable;

// NCCL's logFunction, or nothing (it may be null). Messages are passed as "%s" arguments:
// they can hold cache contents and must never be read as a format.
class NcclLog {
 public:
  explicit NcclLog(abi::DebugLogger fn) : fn_(fn) {}
  void Write(int level, unsigned long flags, int line, const std::string& message) const;
  // The raw logger for the per-call trace line: formatting without allocation, because
  // NCCL's logger drops it cheaply unless NCCL_DEBUG=TRACE.
  abi::DebugLogger raw() const { return fn_; }

 private:
  abi::DebugLogger fn_;
};

class TunerContext {
 public:
  static std::unique_ptr<TunerContext> Create(std::uint64_t comm_id, std::size_t n_ranks,
                                              std::size_t n_nodes, abi::DebugLogger log);

  // Forces the cost-table entry of the nearest tuned size's applied choice (0 for it, 1e9
  // for every other entry NCCL offered), and *n_channels when it names ctas. Leaves the
  // table alone when nothing applies or NCCL ruled the entry out (< 0) for this call.
  void GetCollInfo(int coll_type, std::size_t n_bytes, float** cost_table, int num_algo,
                   int num_proto, int* n_channels);

  const WinnerTable& table() const { return table_; }

 private:
  explicit TunerContext(abi::DebugLogger log) : log_(log) {}
  void Load(std::uint64_t comm_id, std::size_t n_ranks, std::size_t n_nodes);
  int ChannelCeiling() const;  // NCCL_MIN_CTAS, or 0 with a warning when malformed
  void LogSubstitutions() const;

  NcclLog log_;
  std::string fingerprint_;
  WinnerTable table_;
  std::atomic<bool> warned_layout_{false};
};

}  // namespace ccltune::plugin
