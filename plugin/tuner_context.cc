// Per-communicator init and the per-call decision (tuner_context.h).
#include "plugin/tuner_context.h"

#include <chrono>

#include "core/apply/applied_choice.h"
#include "core/apply/plugin_config.h"
#include "core/apply/winner_loader.h"
#include "plugin/plugin_fingerprint.h"

namespace ccltune::plugin {
namespace {

using Clock = std::chrono::steady_clock;
constexpr float kNotChosen = 1e9f;

long long MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

}  // namespace

void NcclLog::Write(int level, unsigned long flags, int line, const std::string& message) const {
  if (fn_ != nullptr) fn_(level, flags, __FILE__, line, "ccltune tuner: %s", message.c_str());
}

std::unique_ptr<TunerContext> TunerContext::Create(std::uint64_t comm_id, std::size_t n_ranks,
                                                   std::size_t n_nodes, abi::DebugLogger log) {
  std::unique_ptr<TunerContext> ctx(new TunerContext(log));
  ctx->Load(comm_id, n_ranks, n_nodes);
  return ctx;
}

void TunerContext::Load(std::uint64_t comm_id, std::size_t n_ranks, std::size_t n_nodes) {
  const auto start = Clock::now();
  const unsigned long flags = abi::kLogInit | abi::kLogTuning;
  auto config = apply::PluginConfigFromEnv();
  if (!config.ok())
    return log_.Write(abi::kLogWarn, flags, __LINE__, config.status().message() + "; inactive");
  const auto deadline = start + config->load_timeout;
  auto fp = CommunicatorFingerprint(n_ranks, n_nodes);
  if (!fp.ok())
    return log_.Write(abi::kLogWarn, flags, __LINE__, fp.status().message() + "; inactive");
  fingerprint_ = *fp;
  auto loaded = apply::LoadWinners(*config, fingerprint_, deadline);
  const std::string where = "comm " + std::to_string(comm_id) + " (" + std::to_string(n_ranks) +
                            " ranks, " + std::to_string(n_nodes) + " nodes, fingerprint " +
                            fingerprint_ + ")";
  if (!loaded.ok()) {
    const int level =
        loaded.status().code() == core::StatusCode::kNotFound ? abi::kLogInfo : abi::kLogWarn;
    return log_.Write(level, flags, __LINE__,
                      where + ": " + loaded.status().message() + "; NCCL's own choices apply");
  }
  if (loaded->rejected > 0) {
    log_.Write(abi::kLogWarn, flags, __LINE__,
               where + ": skipped " + std::to_string(loaded->rejected) +
                   " unusable records, first: " + loaded->first_error);
  }
  table_ = WinnerTable::Build(std::move(loaded->records), config->dtype, ChannelCeiling());
  log_.Write(abi::kLogInfo, flags, __LINE__,
             where + ": " + table_.Describe() + " in " + std::to_string(MsSince(start)) + " ms");
  LogSubstitutions();
}

int TunerContext::ChannelCeiling() const {
  auto ceiling = apply::ChannelCeilingFromEnv();
  if (ceiling.ok()) return *ceiling;
  log_.Write(abi::kLogWarn, abi::kLogInit | abi::kLogTuning, __LINE__,
             ceiling.status().message() +
                 "; the communicators' channel count is unknown, so no ctas winner is applied");
  return 0;
}

// One line per size whose winner the plugin cannot reproduce (applied_choice.h), so a user
// sees what to set; bounded, because a table can hold thousands of sizes.
void TunerContext::LogSubstitutions() const {
  constexpr int kMaxLines = 16;
  int substituted = 0;
  for (int f = 0; f < abi::kNumFuncs; ++f) {
    for (const TableEntry& e : table_.Entries(f)) {
      if (!e.applied.substituted) continue;
      if (++substituted <= kMaxLines)
        log_.Write(abi::kLogInfo, abi::kLogInit | abi::kLogTuning, __LINE__,
                   EntryName(e.record) + ": " + e.applied.reason);
    }
  }
  if (substituted > kMaxLines)
    log_.Write(abi::kLogInfo, abi::kLogInit | abi::kLogTuning, __LINE__,
               "and " + std::to_string(substituted - kMaxLines) + " more sizes substituted");
}

void TunerContext::GetCollInfo(int coll_type, std::size_t n_bytes, float** cost_table, int num_algo,
                               int num_proto, int* n_channels) {
  const TableEntry* e = table_.Lookup(coll_type, n_bytes);
  if (e == nullptr || e->applied.name.empty()) return;
  const ForcedChoice& f = e->applied.forced;
  if (f.algo >= 0) {
    if (cost_table == nullptr || num_proto != abi::kNumProtocols ||
        num_algo > abi::kNumAlgorithms || f.algo >= num_algo) {
      if (!warned_layout_.exchange(true))
        log_.Write(abi::kLogWarn, abi::kLogTuning, __LINE__,
                   "cost table is " + std::to_string(num_algo) + "x" + std::to_string(num_proto) +
                       ", not the v5 layout; leaving NCCL's choices");
      return;
    }
    auto* table = reinterpret_cast<float(*)[abi::kNumProtocols]>(cost_table);
    if (table[f.algo][f.proto] < 0) return;  // NCCL ruled it out for this call: its choice
    for (int a = 0; a < num_algo; ++a)
      for (int p = 0; p < abi::kNumProtocols; ++p)
        if (table[a][p] >= 0) table[a][p] = kNotChosen;
    table[f.algo][f.proto] = 0.0f;
  }
  if (f.channels > 0 && n_channels != nullptr) *n_channels = f.channels;
  if (log_.raw() != nullptr)
    log_.raw()(abi::kLogTrace, abi::kLogTuning, __FILE__, __LINE__,
               "ccltune tuner: coll %d %zu B -> %llu B bucket: winner %s, applied %s", coll_type,
               n_bytes, static_cast<unsigned long long>(e->record.bytes), e->record.winner.c_str(),
               e->applied.name.c_str());
}

}  // namespace ccltune::plugin
