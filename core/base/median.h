// The median of a few measured values (rounds, ranks): the middle one, or the mean of the two
// middle ones for an even count; 0 when there are none.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace ccltune::core {

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace ccltune::core
