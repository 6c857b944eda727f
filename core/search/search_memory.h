// What the adaptive search carries from one size to the next within a group (op, dtype,
// redop, epilogue; a plan's sizes come in ascending order): the choices' ranking at the sizes
// already tuned, which sets the measuring order (the likely winner early, so it is the
// reference the others are screened against), and the choices that cannot run in the group
// at all, which are not prepared again. It learns only what every rank holds alike (times
// that are maxima across ranks, skips the ranks agreed on), so every rank measures the same
// choices in the same order; a rank that went its own way would deadlock the job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/plan/problem.h"
#include "core/results/result.h"

namespace ccltune::core {

class SearchMemory {
 public:
  // The measuring order of a problem's candidates (`names`, catalog order) as indices into
  // `names`: `first` (the default, always measured in full) when present, then the choices
  // that measured ok at the group's nearest tuned size (log2 distance), fastest first, then
  // the rest in catalog order.
  std::vector<std::size_t> Order(const Problem& problem, const std::vector<std::string>& names,
                                 const std::string& first) const;

  // Keeps the ranking of the record's ok choices at its size, and its default's time.
  void Learn(const ResultRecord& record);

  // The default's time per op (µs) at the largest size of the group tuned so far that is no
  // larger than the problem's; 0 when there is none (what sets the screening rounds' length).
  double DefaultOpUs(const Problem& problem) const;

  // A choice that cannot run anywhere in the problem's group (a property of the choice on this
  // communicator, not of the size).
  void RememberSkip(const Problem& problem, const std::string& choice, const std::string& reason);
  // The reason, with the size it was learned at; nullptr when nothing is known.
  const std::string* KnownSkip(const Problem& problem, const std::string& choice) const;

 private:
  struct Group {
    std::map<std::uint64_t, std::vector<std::string>> ranking;  // bytes -> fastest first
    std::map<std::string, std::string> skips;                   // choice -> reason
    std::map<std::uint64_t, double> default_us;                 // bytes -> default's time
  };
  const std::vector<std::string>* Nearest(const Problem& problem) const;

  std::map<std::string, Group> groups_;
};

}  // namespace ccltune::core
