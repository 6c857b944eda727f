// Reading an exposition in the telemetry tests: its sample lines as series -> value.
// Header-only (tests only).
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

namespace ccltune::testing {

// Series (name and labels, as written) -> value, for the sample lines starting with `prefix`.
using Samples = std::map<std::string, std::string>;

inline Samples ParseSamples(const std::string& text, const std::string& prefix) {
  Samples out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto space = line.rfind(' ');
    if (line.rfind(prefix, 0) == 0 && space != std::string::npos)
      out[line.substr(0, space)] = line.substr(space + 1);
  }
  return out;
}

// The series' value, NaN when it is not there.
inline double SampleValue(const Samples& s, const std::string& series) {
  auto it = s.find(series);
  return it == s.end() ? NAN : std::strtod(it->second.c_str(), nullptr);
}

}  // namespace ccltune::testing
