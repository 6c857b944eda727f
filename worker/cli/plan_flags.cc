#include "worker/cli/plan_flags.h"

#include <sstream>
#include <vector>

#include "core/choice.h"

namespace ccltune::worker::cli {
namespace {

using core::Result;

std::vector<std::string> SplitList(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

// "nccl,nccl:algo=ring,proto=ll,rs+ag": commas separate choices and also the params of
// one choice, so a piece that is only "key=value" continues the choice before it.
std::vector<std::string> SplitChoices(const std::string& s) {
  std::vector<std::string> out;
  for (const auto& piece : SplitList(s)) {
    const bool param = piece.find('=') != std::string::npos && piece.find(':') == std::string::npos;
    if (param && !out.empty())
      out.back() += "," + piece;
    else
      out.push_back(piece);
  }
  return out;
}

Result<std::vector<std::uint64_t>> ParseSizesList(const std::string& text);

// Sizes beyond the cap are rejected here so the message names the flag.
Result<std::vector<std::uint64_t>> ParseSizesFlag(const std::string& text,
                                                  const core::PlanLimits& limits) {
  auto sizes = ParseSizesList(text);
  if (!sizes.ok()) return sizes;
  for (auto s : *sizes)
    if (s > limits.max_bytes)
      return core::InvalidArgument(core::FormatSize(s) + " exceeds the size cap of " +
                                   core::FormatSize(limits.max_bytes));
  return sizes;
}

Result<std::vector<std::uint64_t>> ParseSizesList(const std::string& text) {
  const auto range = SplitList(text, ':');
  std::vector<std::uint64_t> sizes;
  if (range.size() == 2 || range.size() == 3) {
    auto lo = core::ParseSize(range[0]);
    auto hi = core::ParseSize(range[1]);
    if (!lo.ok()) return lo.status();
    if (!hi.ok()) return hi.status();
    std::uint64_t factor = 2;
    if (range.size() == 3) {
      char* end = nullptr;
      const long long f = std::strtoll(range[2].c_str(), &end, 10);
      if (*end || f < 2)
        return core::InvalidArgument("factor '" + range[2] + "' must be an integer >= 2");
      factor = static_cast<std::uint64_t>(f);
    }
    if (*lo > *hi)
      return core::InvalidArgument("min " + range[0] + " is larger than max " + range[1]);
    for (std::uint64_t s = *lo; s <= *hi; s *= factor) {
      sizes.push_back(s);
      if (sizes.size() > 4096 || s > (UINT64_MAX / factor)) break;
    }
    return sizes;
  }
  for (const auto& item : SplitList(text)) {
    auto s = core::ParseSize(item);
    if (!s.ok()) return s.status();
    sizes.push_back(*s);
  }
  if (sizes.empty()) return core::InvalidArgument("no sizes given");
  return sizes;
}

core::Status ApplyCollectiveFlags(const PlanFlags& f, const std::string& backend,
                                  const core::PlanLimits& limits, core::Plan& plan) {
  if (!f.ops.empty()) {
    const core::CollectiveSpec tmpl =
        plan.collectives.empty() ? core::CollectiveSpec{} : plan.collectives.front();
    plan.collectives.clear();
    for (const auto& name : SplitList(f.ops)) {
      auto op = core::ParseOp(name);
      if (!op.ok()) return op.status().WithContext("--op");
      core::CollectiveSpec c = tmpl;
      c.op = *op;
      c.reduce_op = core::IsReducing(*op) ? core::RedOp::kSum : core::RedOp::kNone;
      plan.collectives.push_back(c);
    }
  }
  for (auto& c : plan.collectives) {
    if (!f.dtypes.empty()) {
      c.dtypes.clear();
      for (const auto& name : SplitList(f.dtypes)) {
        auto d = core::ParseDtype(name);
        if (!d.ok()) return d.status().WithContext("--dtypes");
        c.dtypes.push_back(*d);
      }
    }
    if (!f.sizes.empty()) {
      auto sizes = ParseSizesFlag(f.sizes, limits);
      if (!sizes.ok()) return sizes.status().WithContext("--sizes");
      c.sizes = *sizes;
    }
    if (!f.choices.empty()) {
      c.choices.clear();
      for (const auto& name : SplitChoices(f.choices)) {
        auto ch = core::ParseChoice(name, backend);
        if (!ch.ok()) return ch.status().WithContext("--choices");
        c.choices.push_back(ch->ToString());
      }
    }
  }
  return core::Status::Ok();
}

void ApplyBenchmarkFlags(const PlanFlags& f, core::BenchmarkSpec& b) {
  if (f.iters) b.iters = *f.iters;
  if (f.rounds) b.rounds = *f.rounds;
  if (f.warmup) b.warmup_iters = *f.warmup;
  if (f.choice_timeout) b.choice_timeout_seconds = *f.choice_timeout;
  if (f.presync_window) b.pre_sync_window_seconds = *f.presync_window;
  if (f.rendezvous_timeout) b.rendezvous_timeout_seconds = *f.rendezvous_timeout;
  if (f.cuda_graph) b.cuda_graph = true;
}

}  // namespace

Result<core::Plan> BuildPlan(const PlanFlags& f, const std::string& backend,
                             const core::PlanLimits& limits) {
  core::Plan plan;
  if (!f.plan_file.empty()) {
    auto loaded = core::LoadPlanFile(f.plan_file, limits);
    if (!loaded.ok()) return loaded.status().WithContext(f.plan_file);
    plan = *loaded;
  } else {
    plan = core::DefaultPlan(backend);
  }
  CCLTUNE_RETURN_IF_ERROR(ApplyCollectiveFlags(f, backend, limits, plan));
  ApplyBenchmarkFlags(f, plan.benchmark);
  CCLTUNE_RETURN_IF_ERROR(core::ValidatePlan(plan, limits, backend));
  return plan;
}

}  // namespace ccltune::worker::cli
