// Result records for the export/report tests: a small published set with NCCL-internal,
// default, ctas-only and non-NCCL winners over two ops and two dtypes.
#pragma once

#include <string>
#include <vector>

#include "core/results/result.h"

namespace ccltune::testing {

core::ResultRecord FixtureRecord(const std::string& fp, core::Op op, core::Dtype dtype,
                                 std::uint64_t bytes, const std::string& winner);
std::vector<core::ResultRecord> FixtureSet(const std::string& fp);

}  // namespace ccltune::testing
