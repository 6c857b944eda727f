#include "worker/cli/plan_flags.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <sstream>
#include <vector>

#include "core/base/sizes.h"
#include "core/plan/choice.h"

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

// The FACTOR of MIN:MAX[:FACTOR] (2 when absent).
Result<std::uint64_t> RangeFactor(const std::vector<std::string>& range) {
  if (range.size() < 3) return std::uint64_t{2};
  char* end = nullptr;
  const long long f = std::strtoll(range[2].c_str(), &end, 10);
  if (*end || f < 2)
    return core::InvalidArgument("factor '" + range[2] + "' must be an integer >= 2");
  return static_cast<std::uint64_t>(f);
}

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
    CCLTUNE_ASSIGN_OR_RETURN(const std::uint64_t factor, RangeFactor(range));
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

// "1,8,32" or "1:2048[:factor]": integers 1..max_tokens, ascending and deduplicated.
Result<std::vector<std::uint64_t>> ParseTokensFlag(const std::string& text,
                                                   const core::PlanLimits& limits) {
  const std::string allowed = "(a list 1,8,32 or MIN:MAX[:FACTOR] of integers 1.." +
                              std::to_string(limits.max_tokens) + ")";
  auto number = [&](const std::string& item) -> Result<std::uint64_t> {
    char* end = nullptr;
    const long long n = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end || n < 1 || static_cast<std::uint64_t>(n) > limits.max_tokens)
      return core::InvalidArgument("'" + item + "' is not allowed " + allowed);
    return static_cast<std::uint64_t>(n);
  };
  std::vector<std::uint64_t> tokens;
  const auto range = SplitList(text, ':');
  if (range.size() == 2 || range.size() == 3) {
    CCLTUNE_ASSIGN_OR_RETURN(std::uint64_t lo, number(range[0]));
    CCLTUNE_ASSIGN_OR_RETURN(std::uint64_t hi, number(range[1]));
    CCLTUNE_ASSIGN_OR_RETURN(const std::uint64_t factor, RangeFactor(range));
    if (lo > hi)
      return core::InvalidArgument("min " + range[0] + " is larger than max " + range[1]);
    for (std::uint64_t t = lo; t <= hi; t *= factor) tokens.push_back(t);
  } else if (range.size() == 1) {
    for (const auto& item : SplitList(text)) {
      CCLTUNE_ASSIGN_OR_RETURN(std::uint64_t t, number(item));
      tokens.push_back(t);
    }
  }
  if (tokens.empty()) return core::InvalidArgument("no token counts given " + allowed);
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  return tokens;
}

// --epilogue (after --op/--sizes): an all-reduce comes first, so without --op the entries
// of other ops go; an entry that had sizes takes tokens instead, and back for none.
core::Status ApplyEpilogueFlag(const PlanFlags& f, core::Plan& plan) {
  if (f.epilogue.empty()) return core::Status::Ok();
  CCLTUNE_ASSIGN_OR_RETURN(const core::Epilogue e, ParseEpilogueFlag(f.epilogue));
  if (!e.none() && !f.sizes.empty()) {
    return core::InvalidArgument(
        "--sizes: not together with --epilogue (an epilogue problem is tokens x hidden "
        "elements: use --tokens)");
  }
  if (!e.none() && f.ops.empty()) {
    std::erase_if(plan.collectives,
                  [](const core::CollectiveSpec& c) { return c.op != core::Op::kAllReduce; });
    if (plan.collectives.empty())
      return core::InvalidArgument("--epilogue: the plan has no allReduce entry to fuse");
  }
  for (auto& c : plan.collectives) {
    if (!e.none() && c.op != core::Op::kAllReduce) {
      return core::InvalidArgument(std::string("--epilogue: ") + core::OpName(c.op) +
                                   " takes no epilogue (only allReduce; use --op allReduce)");
    }
    if (e.none() == c.epilogue.none()) {
      c.epilogue = e;
      continue;
    }
    c.epilogue = e;
    if (e.none()) {
      c.tokens.clear();
    } else {
      c.sizes.clear();
      if (c.tokens.empty()) {
        c.tokens.assign(std::begin(kDefaultEpilogueTokens), std::end(kDefaultEpilogueTokens));
      }
    }
  }
  return core::Status::Ok();
}

// --tokens replaces the rows of every epilogue entry; it means nothing without one.
core::Status ApplyTokensFlag(const PlanFlags& f, const core::PlanLimits& limits, core::Plan& plan) {
  if (f.tokens.empty()) return core::Status::Ok();
  if (!f.sizes.empty()) {
    return core::InvalidArgument(
        "--tokens: not together with --sizes (an epilogue problem is tokens x hidden "
        "elements; plain collectives take --sizes)");
  }
  auto tokens = ParseTokensFlag(f.tokens, limits);
  if (!tokens.ok()) return tokens.status().WithContext("--tokens");
  bool any = false;
  for (auto& c : plan.collectives) {
    if (c.epilogue.none()) continue;
    c.tokens = *tokens;
    any = true;
  }
  if (!any) {
    return core::InvalidArgument(
        "--tokens: only with an epilogue (add --epilogue residualRmsNorm,hidden=H or a plan "
        "entry with one)");
  }
  return core::Status::Ok();
}

// --redop (after --op): the reduction of every allReduce and reduceScatter entry.
core::Status ApplyRedOpFlag(const PlanFlags& f, core::Plan& plan) {
  if (f.redop.empty()) return core::Status::Ok();
  auto r = core::ParseRedOp(f.redop);
  if (!r.ok()) return r.status().WithContext("--redop");
  bool any = false;
  for (auto& c : plan.collectives) {
    if (!core::IsReducing(c.op)) continue;
    c.reduce_op = *r;
    any = true;
  }
  if (!any) {
    return core::InvalidArgument(
        "--redop: only with a reducing collective (--op allReduce or reduceScatter)");
  }
  return core::Status::Ok();
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
  CCLTUNE_RETURN_IF_ERROR(ApplyRedOpFlag(f, plan));
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
      if (!c.epilogue.none() && f.epilogue.empty()) {
        return core::InvalidArgument(
            "--sizes: the plan's epilogue entries take token counts (use --tokens, or "
            "--epilogue none for plain collectives)");
      }
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

Result<core::Epilogue> ParseEpilogueFlag(const std::string& text) {
  const std::string form = " (must be KIND[,hidden=H][,eps=E] with KIND " +
                           core::AllowedEpilogueKinds() + ", e.g. residualRmsNorm,hidden=4096)";
  const auto parts = SplitList(text);
  if (parts.empty()) return core::InvalidArgument("--epilogue: no kind given" + form);
  core::Epilogue e;
  auto kind = core::ParseEpilogueKind(parts[0]);
  if (!kind.ok()) return core::InvalidArgument("--epilogue: " + kind.status().message() + form);
  e.kind = *kind;
  bool has_hidden = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    const std::string key = parts[i].substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : parts[i].substr(eq + 1);
    char* end = nullptr;
    if (key == "hidden" && !value.empty()) {
      const long long h = std::strtoll(value.c_str(), &end, 10);
      if (*end)
        return core::InvalidArgument("--epilogue: hidden '" + value + "' is not an integer");
      e.hidden = static_cast<int>(std::clamp<long long>(h, -1, core::kMaxEpilogueHidden + 1));
      has_hidden = true;
    } else if (key == "eps" && !value.empty() && e.kind == core::EpilogueKind::kResidualRmsNorm) {
      e.eps = std::strtod(value.c_str(), &end);
      if (*end) return core::InvalidArgument("--epilogue: eps '" + value + "' is not a number");
    } else {
      return core::InvalidArgument("--epilogue: '" + parts[i] + "' is not allowed" + form);
    }
  }
  if (e.none()) {
    if (parts.size() > 1) return core::InvalidArgument("--epilogue: none takes no hidden or eps");
    return e;
  }
  if (!has_hidden) return core::InvalidArgument("--epilogue: hidden=H is required" + form);
  const core::Status valid = core::ValidateEpilogue(e, "");  // "hidden: ...", "eps: ..."
  if (!valid.ok()) return valid.WithContext("--epilogue");
  return e;
}

Result<std::optional<core::Plan>> LoadPlanFlag(const PlanFlags& f, const core::PlanLimits& limits) {
  if (f.plan_file.empty()) return std::optional<core::Plan>();
  CCLTUNE_ASSIGN_OR_RETURN(core::Plan plan, core::LoadPlanFile(f.plan_file, limits));
  return std::optional<core::Plan>(std::move(plan));
}

Result<core::Plan> BuildPlan(const PlanFlags& f, const std::optional<core::Plan>& base,
                             const std::string& backend, const core::PlanLimits& limits) {
  core::Plan plan = base ? *base : core::DefaultPlan(backend);
  CCLTUNE_RETURN_IF_ERROR(ApplyCollectiveFlags(f, backend, limits, plan));
  CCLTUNE_RETURN_IF_ERROR(ApplyEpilogueFlag(f, plan));
  CCLTUNE_RETURN_IF_ERROR(ApplyTokensFlag(f, limits, plan));
  ApplyBenchmarkFlags(f, plan.benchmark);
  if (f.emulate_nodes) plan.emulated_nodes = *f.emulate_nodes;
  if (!f.search.empty()) {
    auto search = core::ParseSearch(f.search);
    if (!search.ok()) return search.status().WithContext("--search");
    plan.search = *search;
  }
  CCLTUNE_RETURN_IF_ERROR(core::ValidatePlan(plan, limits, backend));
  return plan;
}

}  // namespace ccltune::worker::cli
