// FeedSyntheticRun: the events of one rank of a complete, plausible tuning job, for tests that
// need a filled WorkerMetrics without a GPU or a cluster. Every docs/design.md §7 worker family
// gets data: pre-sync, barriers, ok/timeout/wrong/skipped choices, winners (by core::PickWinner, so
// the default sometimes wins), progress, finish. Figures follow docs/design.md §11 (4× H200, bf16).
// Besides 9 sizes each of allReduce bf16 and allGather fp32, kSyntheticEpilogueProblems
// all-reduce + residualRmsNorm problems (hidden kSyntheticEpilogueHidden, 1…128 tokens) with
// unfused (nccl, oneshot) and fused (oneshot-fused, twoshot-fused) choices, so the epilogue
// label and the dashboards' epilogue panel have data.
#pragma once

#include "worker/metrics/worker_metrics.h"

namespace ccltune::testing {

inline constexpr char kSyntheticFingerprint[] = "3f2a9c0d1e4b5a67";
inline constexpr int kSyntheticWorldSize = 4;
inline constexpr int kSyntheticEpilogueHidden = 4096;
inline constexpr int kSyntheticEpilogueProblems = 4;

void FeedSyntheticRun(worker::WorkerMetrics& metrics, int rank);

}  // namespace ccltune::testing
