// The rule that lets the adaptive search drop a choice (issue 25; the modes' names are in
// core/plan/search_mode.h). `exhaustive` measures every applicable choice in full
// (docs/design.md §2). `adaptive`, the default, measures the backend's default in full; every other
// choice first runs a few screening rounds (barrier-started, max across ranks: the first
// rounds of its own full measurement, or short rounds that the default runs too, see
// PlanScreening) and gets its full rounds and the correctness check only while the evidence
// says it can still win. Pure functions, so the rule can be tested on synthetic timings;
// worker/rank/bench_runner.cc applies it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/plan/types.h"

namespace ccltune::core {

// Screening rounds of a choice when the plan asks for `rounds` full rounds: at most 2, and
// always fewer than `rounds`, so a choice that survives still runs its full count; 0 (no
// screening, measure in full) when rounds is 1.
int ScreeningRounds(int rounds);

// Short screening rounds (a quarter of `iters`) are used where a problem's ops are long: at
// least this many µs each, judged by the default's time at the nearest smaller size already
// tuned in the group. A round's fixed cost (the gate's release, the first launch, the end
// event) weighs 4x more in a round of iters/4 than in a full one; every choice of the problem
// runs rounds of the same length, so only a difference in that fixed cost between two choices
// could reorder them, and it would have to exceed 20/3 x the threshold (20 % at 3 %) of an op
// of >= 100 µs, i.e. >= 20 µs a round: far above launch-latency differences (a few µs).
// Below it, full-length rounds: they are cheap there, and they are reused. A short round also
// needs at least kMinShortScreeningIters iterations (so iters >= 20), or one disturbed
// iteration decides the round: the host plan's 10 iterations keep full-length screening.
inline constexpr double kShortScreeningMinOpUs = 100;
inline constexpr int kMinShortScreeningIters = 5;

// How the adaptive search screens the choices of one problem.
struct ScreeningPlan {
  int rounds = 0;  // 0: nothing is screened, every choice is measured in full
  int iters = 0;   // iterations of one screening round
  // Short rounds (fewer iterations than a full round) are a measurement of their own: every
  // choice, the default included, runs them, the references are judged by them, and a kept
  // choice then runs all its full rounds. Full-length screening rounds are the first rounds
  // of the choice's full measurement, and references are judged by their full rounds.
  bool short_rounds = false;
};

// `rounds`, `iters`: the plan's full rounds; `expected_op_us`: the default's time per op at
// the nearest smaller size tuned in the group (0 when none).
ScreeningPlan PlanScreening(int rounds, int iters, double expected_op_us);

// A choice measured in full and verified correct on this problem: its slowest round (µs,
// max across ranks), the pessimistic end of its time; with short screening rounds, its
// slowest short round, so that candidates and references are judged on rounds of one length.
struct Reference {
  std::string name;
  double max_us = 0;
  // Which of a program's buffers it runs on (core/apply/any_buffer.h).
  BufferReach reach = BufferReach::kAny;
};

struct ScreeningVerdict {
  bool drop = false;
  std::string reason;  // why it was dropped (the record's reason); empty when kept
};

// The reach a fully measured choice judges others with. An eager tune's any-buffer choice
// dearer to issue than the default (`host_us` against `default_host_us`, IssueCostQualifies)
// serves no program's own buffers eager, so it must not prune a choice that may: it judges
// as far as registered buffers (captured calls, where issue cost is paid once) and no further.
BufferReach ReachAsReference(BufferReach reach, std::optional<double> host_us,
                             std::optional<double> default_host_us, double noise_threshold_percent);

// The pruning rule. A screened choice is dropped only when every one of its screening rounds
// (µs, max across ranks) is slower than (1 + noise/100) x the slowest round of the best
// reference (the reference whose slowest round is fastest; rounds of the same length). Its fastest
// round is compared with the reference's slowest, so a choice whose rounds overlap the best's
// spread widened by the noise threshold is always kept; and a dropped choice could only have won if
// its own median came out more than the threshold below every round it ran, which is more than the
// noise the threshold allows. Nothing is dropped without a reference.
//
// A candidate that reaches further than pooled buffers (`reach`) competes twice: for the
// winner, and for the fastest choice a program's own tensors can run (issue 43): on any
// buffer (the record keeps it beside the winner), or on registered ones in CUDA graphs (the
// runtime's direct mode picks it from the record's choices). So it is judged only against
// references that reach as far: a winner that needs pooled buffers never prunes a registered
// or an any-buffer choice, nor a registered winner an any-buffer one, and by the argument
// above the fastest choice of each reach is always measured in full. The backend's default
// runs on any buffer and is always a reference, so such a candidate still has one to be
// judged by.
ScreeningVerdict JudgeScreening(const std::vector<double>& screening_us,
                                const std::vector<Reference>& references,
                                double noise_threshold_percent,
                                BufferReach reach = BufferReach::kPooled);

}  // namespace ccltune::core
