// The nccl-tests-style table (docs/design.md §2.7) that `ccltune tune` and `ccltune results` print:
// one line per size with the default's time, the winner, its time, algbw, busbw, speedup, and
// the fastest choice that runs on any buffer (the winner, or another with its time and speedup);
// with `verbose`, one indented line per measured choice below it. Problems with an epilogue
// form their own groups ("allReduce bf16 sum + residualRmsNorm hidden=4096") with a tokens
// column.
#pragma once

#include <cstdio>
#include <vector>

#include "core/results/result.h"

namespace ccltune::worker {

void PrintResultsTable(std::FILE* out, const std::vector<core::ResultRecord>& records,
                       bool verbose);

}  // namespace ccltune::worker
