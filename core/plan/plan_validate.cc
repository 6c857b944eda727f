// ValidatePlan: the rules every plan obeys, whether it came from YAML, JSON, flags or code.
// Messages name the field path the way ParsePlan reports it.
#include <algorithm>
#include <set>

#include "core/base/sizes.h"
#include "core/base/yaml_fields.h"
#include "core/plan/choice.h"
#include "core/plan/plan.h"

namespace ccltune::core {
namespace {

using yaml::FieldError;
using yaml::Index;
using yaml::Key;

std::string Num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

Status IntIn(const std::string& path, long long v, long long lo, long long hi) {
  if (v >= lo && v <= hi) return Status::Ok();
  return FieldError(path, std::to_string(v) + " is not allowed (must be an integer " +
                              std::to_string(lo) + ".." + std::to_string(hi) + ")");
}

Status SecondsIn(const std::string& path, double v, double max) {
  if (v > 0 && v <= max) return Status::Ok();
  return FieldError(path, Num(v) + " is not allowed (must be > 0 and <= " + Num(max) + ")");
}

Status ValidateSizes(const CollectiveSpec& c, const std::string& path, const PlanLimits& l) {
  if (c.sizes.empty()) return FieldError(path, "must list at least one size");
  if (c.sizes.size() > l.max_sizes_per_collective) {
    return FieldError(path, std::to_string(c.sizes.size()) + " sizes is not allowed (at most " +
                                std::to_string(l.max_sizes_per_collective) + ")");
  }
  for (std::size_t i = 0; i < c.sizes.size(); ++i) {
    const std::uint64_t s = c.sizes[i];
    if (s == 0) return FieldError(Index(path, i), "0 is not allowed (must be > 0)");
    if (s > l.max_bytes) {
      return FieldError(Index(path, i), FormatSize(s) + " is not allowed (must be <= " +
                                            FormatSize(l.max_bytes) + ", the configured cap)");
    }
    if (i > 0 && s <= c.sizes[i - 1]) {
      return FieldError(Index(path, i), "sizes must be ascending without duplicates");
    }
  }
  return Status::Ok();
}

Status ValidateDtypes(const CollectiveSpec& c, const std::string& path) {
  if (c.dtypes.empty()) return FieldError(path, "must not be empty (" + AllowedDtypes() + ")");
  for (std::size_t i = 0; i < c.dtypes.size(); ++i) {
    if (std::count(c.dtypes.begin(), c.dtypes.begin() + i, c.dtypes[i]) != 0) {
      return FieldError(Index(path, i),
                        std::string("'") + DtypeName(c.dtypes[i]) + "' is listed twice");
    }
  }
  return Status::Ok();
}

Status ValidateReduceOp(const CollectiveSpec& c, const std::string& path) {
  if (IsReducing(c.op) && c.reduce_op == RedOp::kNone) {
    return FieldError(
        path, "is required for " + std::string(OpName(c.op)) + " (" + AllowedRedOps() + ")");
  }
  // kSum is CollectiveSpec's default, so code that builds a plan for a non-reducing op may
  // leave it; ExpandPlan maps it to "none". Anything else was asked for on purpose.
  if (!IsReducing(c.op) && c.reduce_op != RedOp::kNone && c.reduce_op != RedOp::kSum) {
    return FieldError(path, std::string("not allowed for ") + OpName(c.op) +
                                " (only allReduce and reduceScatter take a reduceOp)");
  }
  return Status::Ok();
}

Status ValidateChoices(const CollectiveSpec& c, const std::string& path,
                       const std::string& backend) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < c.choices.size(); ++i) {
    auto parsed = ParseChoice(c.choices[i], backend);
    if (!parsed.ok()) return FieldError(Index(path, i), parsed.status().message());
    if (!seen.insert(parsed->ToString()).second) {
      return FieldError(Index(path, i), "'" + c.choices[i] + "' is listed twice");
    }
  }
  return Status::Ok();
}

// Rows of an epilogue entry: ascending, 1..max_tokens, and no problem over the byte cap.
Status ValidateTokens(const CollectiveSpec& c, const std::string& path, const PlanLimits& l) {
  if (c.tokens.empty()) return FieldError(path, "must list at least one token count");
  if (c.tokens.size() > l.max_sizes_per_collective) {
    return FieldError(path, std::to_string(c.tokens.size()) +
                                " token counts is not allowed (at "
                                "most " +
                                std::to_string(l.max_sizes_per_collective) + ")");
  }
  for (std::size_t i = 0; i < c.tokens.size(); ++i) {
    const std::uint64_t t = c.tokens[i];
    CCLTUNE_RETURN_IF_ERROR(
        IntIn(Index(path, i), static_cast<long long>(t), 1, static_cast<long long>(l.max_tokens)));
    if (i > 0 && t <= c.tokens[i - 1]) {
      return FieldError(Index(path, i), "token counts must be ascending without duplicates");
    }
    for (Dtype d : c.dtypes) {
      const std::uint64_t bytes = t * c.epilogue.RowBytes(d);
      if (bytes > l.max_bytes) {
        return FieldError(Index(path, i), std::to_string(t) + " tokens x hidden " +
                                              std::to_string(c.epilogue.hidden) + " of " +
                                              DtypeName(d) + " is " + FormatSize(bytes) +
                                              " (must be <= " + FormatSize(l.max_bytes) +
                                              ", the configured cap)");
      }
    }
  }
  return Status::Ok();
}

// An epilogue follows a sum all-reduce of floats, on GPUs: anything else is one error.
Status ValidateEpilogueEntry(const CollectiveSpec& c, const std::string& path,
                             const PlanLimits& limits, const std::string& backend) {
  const std::string epath = Key(path, "epilogue");
  CCLTUNE_RETURN_IF_ERROR(ValidateEpilogue(c.epilogue, epath));
  if (c.op != Op::kAllReduce) {
    return FieldError(epath, std::string("not allowed for ") + OpName(c.op) +
                                 " (only allReduce takes an epilogue)");
  }
  if (c.reduce_op != RedOp::kSum) {
    return FieldError(Key(path, "reduceOp"), std::string("'") + RedOpName(c.reduce_op) +
                                                 "' is not allowed with an epilogue (must be sum)");
  }
  if (backend == "host") {
    return FieldError(epath, "the host backend runs no epilogues (use backend nccl)");
  }
  for (std::size_t i = 0; i < c.dtypes.size(); ++i) {
    if (!IsFloat(c.dtypes[i])) {
      return FieldError(Index(Key(path, "dtypes"), i),
                        std::string("'") + DtypeName(c.dtypes[i]) +
                            "' is not allowed with an epilogue (fp32, fp16, bf16)");
    }
  }
  if (!c.sizes.empty()) {
    return FieldError(Key(path, "sizes"),
                      "not allowed with an epilogue (list tokens: the rows of hidden elements)");
  }
  return ValidateTokens(c, Key(path, "tokens"), limits);
}

Status ValidateCollective(const CollectiveSpec& c, const std::string& path,
                          const PlanLimits& limits, const std::string& backend) {
  CCLTUNE_RETURN_IF_ERROR(ValidateDtypes(c, Key(path, "dtypes")));
  CCLTUNE_RETURN_IF_ERROR(ValidateReduceOp(c, Key(path, "reduceOp")));
  if (!c.epilogue.none()) {
    CCLTUNE_RETURN_IF_ERROR(ValidateEpilogueEntry(c, path, limits, backend));
  } else if (!c.tokens.empty()) {
    return FieldError(Key(path, "tokens"),
                      "only with an epilogue (a plain collective lists sizes)");
  } else {
    CCLTUNE_RETURN_IF_ERROR(ValidateSizes(c, Key(path, "sizes"), limits));
  }
  return ValidateChoices(c, Key(path, "choices"), backend);
}

Status ValidateBenchmark(const BenchmarkSpec& b, const std::string& path, const PlanLimits& l) {
  CCLTUNE_RETURN_IF_ERROR(IntIn(Key(path, "warmupIters"), b.warmup_iters, 0, l.max_iters));
  CCLTUNE_RETURN_IF_ERROR(IntIn(Key(path, "iters"), b.iters, 1, l.max_iters));
  CCLTUNE_RETURN_IF_ERROR(IntIn(Key(path, "rounds"), b.rounds, 1, l.max_rounds));
  CCLTUNE_RETURN_IF_ERROR(SecondsIn(Key(path, "preSyncWindowSeconds"), b.pre_sync_window_seconds,
                                    l.max_timeout_seconds));
  CCLTUNE_RETURN_IF_ERROR(SecondsIn(Key(path, "rendezvousTimeoutSeconds"),
                                    b.rendezvous_timeout_seconds, l.max_timeout_seconds));
  CCLTUNE_RETURN_IF_ERROR(SecondsIn(Key(path, "choiceTimeoutSeconds"), b.choice_timeout_seconds,
                                    l.max_timeout_seconds));
  const double noise = b.noise_threshold_percent;
  if (!(noise >= 0 && noise < 100)) {
    return FieldError(Key(path, "noiseThresholdPercent"),
                      Num(noise) + " is not allowed (must be >= 0 and < 100)");
  }
  return Status::Ok();
}

}  // namespace

Status ValidatePlan(const Plan& plan, const PlanLimits& limits, const std::string& backend,
                    const std::string& field_prefix) {
  const std::string path = Key(field_prefix, "collectives");
  if (plan.collectives.empty()) return FieldError(path, "must list at least one collective");
  if (plan.collectives.size() > limits.max_collectives) {
    return FieldError(path, std::to_string(plan.collectives.size()) +
                                " collectives is not allowed (at most " +
                                std::to_string(limits.max_collectives) + ")");
  }
  std::size_t problems = 0;
  for (std::size_t i = 0; i < plan.collectives.size(); ++i) {
    const auto& c = plan.collectives[i];
    CCLTUNE_RETURN_IF_ERROR(ValidateCollective(c, Index(path, i), limits, backend));
    problems += c.dtypes.size() * (c.epilogue.none() ? c.sizes.size() : c.tokens.size());
  }
  if (problems > limits.max_problems) {
    return FieldError(path, "the plan has " + std::to_string(problems) +
                                " problems (dtypes x sizes), more than the cap of " +
                                std::to_string(limits.max_problems));
  }
  CCLTUNE_RETURN_IF_ERROR(
      IntIn(Key(field_prefix, "emulatedNodes"), plan.emulated_nodes, 0, limits.max_emulated_nodes));
  return ValidateBenchmark(plan.benchmark, Key(field_prefix, "benchmark"), limits);
}

}  // namespace ccltune::core
