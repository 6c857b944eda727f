// SearchMemory (search_memory.h).
#include "core/search/search_memory.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>

namespace ccltune::core {

namespace {

// The problem key without its size: "allReduce:fp32:sum:0[:epilogue=...]".
std::string GroupKey(Op op, Dtype dtype, RedOp redop, const Epilogue& epilogue) {
  return ProblemKey(op, dtype, redop, 0, epilogue);
}
std::string GroupKey(const Problem& p) { return GroupKey(p.op, p.dtype, p.redop, p.epilogue); }

}  // namespace

const std::vector<std::string>* SearchMemory::Nearest(const Problem& problem) const {
  auto g = groups_.find(GroupKey(problem));
  if (g == groups_.end()) return nullptr;
  const std::vector<std::string>* best = nullptr;
  double best_distance = 0;
  const double log_bytes =
      std::log2(static_cast<double>(std::max<std::uint64_t>(problem.bytes, 1)));
  for (const auto& [bytes, ranking] : g->second.ranking) {  // ascending: ties go to the smaller
    const double d = std::fabs(std::log2(static_cast<double>(bytes)) - log_bytes);
    if (best == nullptr || d < best_distance) {
      best = &ranking;
      best_distance = d;
    }
  }
  return best;
}

std::vector<std::size_t> SearchMemory::Order(const Problem& problem,
                                             const std::vector<std::string>& names,
                                             const std::string& first) const {
  // Sort keys: the default, then the neighbour's rank, then catalog order (stable sort).
  const std::vector<std::string>* ranking = Nearest(problem);
  auto key = [&](std::size_t i) -> std::size_t {
    if (names[i] == first) return 0;
    if (ranking != nullptr) {
      auto it = std::find(ranking->begin(), ranking->end(), names[i]);
      if (it != ranking->end()) return 1 + static_cast<std::size_t>(it - ranking->begin());
    }
    return 1 + (ranking != nullptr ? ranking->size() : 0);
  };
  std::vector<std::size_t> order(names.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  return order;
}

void SearchMemory::Learn(const ResultRecord& record) {
  std::vector<const ChoiceResult*> ok;
  for (const auto& c : record.choices) {
    if (c.status == ChoiceStatus::kOk && std::isfinite(c.time_us)) ok.push_back(&c);
  }
  std::stable_sort(ok.begin(), ok.end(), [](const ChoiceResult* a, const ChoiceResult* b) {
    return a->time_us < b->time_us;
  });
  std::vector<std::string> ranking;
  for (const auto* c : ok) ranking.push_back(c->name);
  const std::string group = GroupKey(record.op, record.dtype, record.redop, record.epilogue);
  groups_[group].ranking[record.bytes] = std::move(ranking);
  if (record.default_time_us > 0) groups_[group].default_us[record.bytes] = record.default_time_us;
}

double SearchMemory::DefaultOpUs(const Problem& problem) const {
  auto g = groups_.find(GroupKey(problem));
  if (g == groups_.end()) return 0;
  const auto& times = g->second.default_us;
  auto above = times.upper_bound(problem.bytes);
  return above == times.begin() ? 0 : std::prev(above)->second;
}

void SearchMemory::RememberSkip(const Problem& problem, const std::string& choice,
                                const std::string& reason) {
  groups_[GroupKey(problem)].skips.emplace(
      choice, reason + " (learned at " + std::to_string(problem.bytes) + " bytes; not retried)");
}

const std::string* SearchMemory::KnownSkip(const Problem& problem,
                                           const std::string& choice) const {
  auto g = groups_.find(GroupKey(problem));
  if (g == groups_.end()) return nullptr;
  auto it = g->second.skips.find(choice);
  return it == g->second.skips.end() ? nullptr : &it->second;
}

}  // namespace ccltune::core
