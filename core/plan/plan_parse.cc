// ParsePlan: YAML/JSON text → Plan. This file checks structure and types (every field
// known, every value of the right kind); plan_validate.cc checks ranges and rules, so a
// plan built in code gets the same checks.
#include <algorithm>

#include "core/base/sizes.h"
#include "core/base/text_file.h"
#include "core/base/yaml_fields.h"
#include "core/plan/choice.h"
#include "core/plan/plan.h"

namespace ccltune::core {
namespace {

using yaml::FieldError;
using yaml::Index;
using yaml::Key;

Result<std::uint64_t> SizeField(const YAML::Node& node, const std::string& path,
                                const PlanLimits& limits) {
  if (!node.IsScalar()) return FieldError(path, "must be a size such as 4096 or 64MiB");
  auto bytes = ParseSize(node.Scalar());
  if (!bytes.ok()) return FieldError(path, bytes.status().message());
  if (*bytes > limits.max_bytes) {
    return FieldError(path, FormatSize(*bytes) + " is not allowed (must be <= " +
                                FormatSize(limits.max_bytes) + ", the configured cap)");
  }
  return *bytes;
}

// min, factor*min, ... up to max, at most the configured number of entries.
Status ExpandRange(std::uint64_t lo, std::uint64_t hi, long long factor, const std::string& path,
                   const PlanLimits& limits, std::vector<std::uint64_t>& out) {
  for (std::uint64_t s = lo; s <= hi; s *= static_cast<std::uint64_t>(factor)) {
    if (out.size() == limits.max_sizes_per_collective) {
      return FieldError(path, "expands to more than " +
                                  std::to_string(limits.max_sizes_per_collective) +
                                  " sizes (the configured cap)");
    }
    out.push_back(s);
    if (s > hi / static_cast<std::uint64_t>(factor)) break;  // next step passes max
  }
  return Status::Ok();
}

Result<long long> RangeFactor(const YAML::Node& node, const std::string& path) {
  if (!node) return 2;
  auto f = yaml::Integer(node, path);
  if (!f.ok() || *f < 2) {
    const std::string text = node.IsScalar() ? node.Scalar() : "?";
    return FieldError(path, text + " is not allowed (must be an integer >= 2)");
  }
  return *f;
}

// {min, max, factor} or a list, each entry read by `read`; ascending and deduplicated.
template <class F>
Status RangeOrList(const YAML::Node& node, const std::string& path, const PlanLimits& limits,
                   const std::string& what, F read, std::string (*format)(std::uint64_t),
                   std::vector<std::uint64_t>& out) {
  if (!node) return FieldError(path, "is required ({min, max, factor} or a list of " + what + ")");
  if (node.IsMap()) {
    CCLTUNE_RETURN_IF_ERROR(yaml::CheckKeys(node, path, {"min", "max", "factor"}));
    if (!node["min"]) return FieldError(Key(path, "min"), "is required");
    if (!node["max"]) return FieldError(Key(path, "max"), "is required");
    CCLTUNE_ASSIGN_OR_RETURN(std::uint64_t lo, read(node["min"], Key(path, "min")));
    CCLTUNE_ASSIGN_OR_RETURN(std::uint64_t hi, read(node["max"], Key(path, "max")));
    CCLTUNE_ASSIGN_OR_RETURN(long long factor, RangeFactor(node["factor"], Key(path, "factor")));
    if (lo > hi) {
      return FieldError(Key(path, "min"),
                        format(lo) + " is larger than max " + format(hi) + " (must be min <= max)");
    }
    return ExpandRange(lo, hi, factor, path, limits, out);
  }
  if (!node.IsSequence() || node.size() == 0) {
    return FieldError(path, "must be {min, max, factor} or a non-empty list of " + what);
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    CCLTUNE_ASSIGN_OR_RETURN(std::uint64_t s, read(node[i], Index(path, i)));
    out.push_back(s);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return Status::Ok();
}

Status Sizes(const YAML::Node& node, const std::string& path, const PlanLimits& limits,
             std::vector<std::uint64_t>& out) {
  auto read = [&](const YAML::Node& n, const std::string& p) { return SizeField(n, p, limits); };
  return RangeOrList(node, path, limits, "sizes", read, FormatSize, out);
}

// Rows of an epilogue problem: plain integers 1..max_tokens.
Status Tokens(const YAML::Node& node, const std::string& path, const PlanLimits& limits,
              std::vector<std::uint64_t>& out) {
  auto read = [&](const YAML::Node& n, const std::string& p) -> Result<std::uint64_t> {
    auto v = yaml::Integer(n, p);
    if (!v.ok() || *v < 1 || static_cast<std::uint64_t>(*v) > limits.max_tokens) {
      const std::string text = n.IsScalar() ? n.Scalar() : "?";
      return FieldError(p, text + " is not allowed (must be an integer 1.." +
                               std::to_string(limits.max_tokens) + ")");
    }
    return static_cast<std::uint64_t>(*v);
  };
  auto decimal = [](std::uint64_t n) { return std::to_string(n); };
  return RangeOrList(node, path, limits, "token counts", read, +decimal, out);
}

// {kind, hidden, eps}; kind none (or no epilogue field) is a plain collective.
Status EpilogueField(const YAML::Node& node, const std::string& path, Epilogue& out) {
  if (!node || node.IsNull()) return Status::Ok();
  CCLTUNE_RETURN_IF_ERROR(yaml::CheckKeys(node, path, {"kind", "hidden", "eps"}));
  if (!node["kind"]) {
    return FieldError(Key(path, "kind"), "is required (" + AllowedEpilogueKinds() + ")");
  }
  CCLTUNE_ASSIGN_OR_RETURN(std::string kind, yaml::String(node["kind"], Key(path, "kind")));
  auto parsed = ParseEpilogueKind(kind);
  if (!parsed.ok()) return FieldError(Key(path, "kind"), parsed.status().message());
  out.kind = *parsed;
  if (out.none()) {
    if (node["hidden"] || node["eps"]) {
      return FieldError(path, "kind none takes no hidden or eps");
    }
    return Status::Ok();
  }
  if (!node["hidden"]) return FieldError(Key(path, "hidden"), "is required (elements per token)");
  CCLTUNE_ASSIGN_OR_RETURN(long long hidden, yaml::Integer(node["hidden"], Key(path, "hidden")));
  CCLTUNE_RETURN_IF_ERROR(CheckHidden(hidden, path));  // before it narrows to int
  out.hidden = static_cast<int>(hidden);
  if (node["eps"]) {
    if (out.kind != EpilogueKind::kResidualRmsNorm) {
      return FieldError(Key(path, "eps"), "only residualRmsNorm takes eps");
    }
    CCLTUNE_ASSIGN_OR_RETURN(out.eps, yaml::Number(node["eps"], Key(path, "eps")));
  }
  return Status::Ok();
}

// Sizes for a plain collective, tokens for one with an epilogue: never both.
Status Extent(const YAML::Node& node, const std::string& path, const PlanLimits& limits,
              CollectiveSpec& c) {
  if (c.epilogue.none()) {
    if (node["tokens"]) {
      return FieldError(Key(path, "tokens"),
                        "only with an epilogue (a plain collective lists sizes)");
    }
    return Sizes(node["sizes"], Key(path, "sizes"), limits, c.sizes);
  }
  if (node["sizes"]) {
    return FieldError(Key(path, "sizes"),
                      "not allowed with an epilogue (list tokens: the rows of hidden elements)");
  }
  return Tokens(node["tokens"], Key(path, "tokens"), limits, c.tokens);
}

Status Dtypes(const YAML::Node& node, const std::string& path, std::vector<Dtype>& out) {
  if (!node) return Status::Ok();  // keeps the default, fp32
  if (!node.IsSequence()) return FieldError(path, "must be a list of " + AllowedDtypes());
  out.clear();
  for (std::size_t i = 0; i < node.size(); ++i) {
    CCLTUNE_ASSIGN_OR_RETURN(std::string s, yaml::String(node[i], Index(path, i)));
    auto d = ParseDtype(s);
    if (!d.ok()) return FieldError(Index(path, i), d.status().message());
    out.push_back(*d);
  }
  return Status::Ok();
}

Status Choices(const YAML::Node& node, const std::string& path, const std::string& backend,
               std::vector<std::string>& out) {
  if (!node || node.IsNull()) return Status::Ok();  // null = every applicable choice
  if (!node.IsSequence()) return FieldError(path, "must be a list of choice names");
  for (std::size_t i = 0; i < node.size(); ++i) {
    CCLTUNE_ASSIGN_OR_RETURN(std::string s, yaml::String(node[i], Index(path, i)));
    auto c = ParseChoice(s, backend);
    if (!c.ok()) return FieldError(Index(path, i), c.status().message());
    out.push_back(c->ToString());  // canonical, so duplicates are caught by validation
  }
  return Status::Ok();
}

Status ReduceOp(const YAML::Node& node, const std::string& path, CollectiveSpec& c) {
  c.reduce_op = IsReducing(c.op) ? RedOp::kSum : RedOp::kNone;
  if (!node) return Status::Ok();
  if (!IsReducing(c.op)) {
    return FieldError(path, std::string("not allowed for ") + OpName(c.op) +
                                " (only allReduce and reduceScatter take a reduceOp)");
  }
  CCLTUNE_ASSIGN_OR_RETURN(std::string s, yaml::String(node, path));
  auto r = ParseRedOp(s);
  if (!r.ok()) return FieldError(path, r.status().message());
  c.reduce_op = *r;
  return Status::Ok();
}

Result<CollectiveSpec> Collective(const YAML::Node& node, const std::string& path,
                                  const PlanLimits& limits, const std::string& backend) {
  CCLTUNE_RETURN_IF_ERROR(yaml::CheckKeys(
      node, path, {"op", "dtypes", "reduceOp", "sizes", "tokens", "epilogue", "choices"}));
  CollectiveSpec c;
  if (!node["op"]) return FieldError(Key(path, "op"), "is required (" + AllowedOps() + ")");
  CCLTUNE_ASSIGN_OR_RETURN(std::string op, yaml::String(node["op"], Key(path, "op")));
  auto parsed = ParseOp(op);
  if (!parsed.ok()) return FieldError(Key(path, "op"), parsed.status().message());
  c.op = *parsed;
  CCLTUNE_RETURN_IF_ERROR(Dtypes(node["dtypes"], Key(path, "dtypes"), c.dtypes));
  CCLTUNE_RETURN_IF_ERROR(ReduceOp(node["reduceOp"], Key(path, "reduceOp"), c));
  CCLTUNE_RETURN_IF_ERROR(EpilogueField(node["epilogue"], Key(path, "epilogue"), c.epilogue));
  CCLTUNE_RETURN_IF_ERROR(Extent(node, path, limits, c));
  CCLTUNE_RETURN_IF_ERROR(Choices(node["choices"], Key(path, "choices"), backend, c.choices));
  return c;
}

template <class T, class F>
Status Read(const YAML::Node& map, const std::string& path, const char* key, T& out, F read) {
  if (!map[key]) return Status::Ok();
  CCLTUNE_ASSIGN_OR_RETURN(auto v, read(map[key], Key(path, key)));
  out = static_cast<T>(v);
  return Status::Ok();
}

Status Benchmark(const YAML::Node& node, const std::string& path, BenchmarkSpec& b) {
  if (!node || node.IsNull()) return Status::Ok();  // every field has a default
  CCLTUNE_RETURN_IF_ERROR(yaml::CheckKeys(
      node, path,
      {"warmupIters", "iters", "rounds", "cudaGraph", "preSyncWindowSeconds",
       "rendezvousTimeoutSeconds", "choiceTimeoutSeconds", "noiseThresholdPercent"}));
  auto integer = [](const YAML::Node& n, const std::string& p) -> Result<long long> {
    CCLTUNE_ASSIGN_OR_RETURN(long long v, yaml::Integer(n, p));
    if (v < INT32_MIN || v > INT32_MAX) return FieldError(p, n.Scalar() + " is out of range");
    return v;
  };
  CCLTUNE_RETURN_IF_ERROR(Read(node, path, "warmupIters", b.warmup_iters, integer));
  CCLTUNE_RETURN_IF_ERROR(Read(node, path, "iters", b.iters, integer));
  CCLTUNE_RETURN_IF_ERROR(Read(node, path, "rounds", b.rounds, integer));
  CCLTUNE_RETURN_IF_ERROR(Read(node, path, "cudaGraph", b.cuda_graph, yaml::Bool));
  CCLTUNE_RETURN_IF_ERROR(
      Read(node, path, "preSyncWindowSeconds", b.pre_sync_window_seconds, yaml::Number));
  CCLTUNE_RETURN_IF_ERROR(
      Read(node, path, "rendezvousTimeoutSeconds", b.rendezvous_timeout_seconds, yaml::Number));
  CCLTUNE_RETURN_IF_ERROR(
      Read(node, path, "choiceTimeoutSeconds", b.choice_timeout_seconds, yaml::Number));
  return Read(node, path, "noiseThresholdPercent", b.noise_threshold_percent, yaml::Number);
}

Status SearchField(const YAML::Node& node, const std::string& path, Search& out) {
  if (!node) return Status::Ok();  // keeps the default, adaptive
  CCLTUNE_ASSIGN_OR_RETURN(std::string text, yaml::String(node, path));
  auto parsed = ParseSearch(text);
  if (!parsed.ok()) return FieldError(path, parsed.status().message());
  out = *parsed;
  return Status::Ok();
}

Status EmulatedNodesField(const YAML::Node& node, const std::string& path, int& out) {
  if (!node) return Status::Ok();  // off
  CCLTUNE_ASSIGN_OR_RETURN(long long v, yaml::Integer(node, path));
  if (v < 0 || v > INT32_MAX) return FieldError(path, node.Scalar() + " is out of range");
  out = static_cast<int>(v);
  return Status::Ok();
}

// spec.worldSize of a job: 1..4096, as the resource's schema has it (docs/design.md §6).
Status WorldSizeField(const YAML::Node& node, const std::string& path, int& out) {
  if (!node) return Status::Ok();
  CCLTUNE_ASSIGN_OR_RETURN(long long v, yaml::Integer(node, path));
  if (v < 1 || v > 4096) {
    return FieldError(path, node.Scalar() + " is not allowed (must be an integer 1..4096)");
  }
  out = static_cast<int>(v);
  return Status::Ok();
}

// A whole CollectiveTuningJob: the plan is spec.collectives, spec.benchmark, spec.search and
// spec.emulatedNodes; the other spec fields belong to the controller and are not checked
// here, but spec.backend and spec.worldSize (`ccltune tune` runs them) are read into
// `job`. spec.backend, when present, restricts the choice names.
Status UnwrapJob(const YAML::Node& root, const std::string& prefix, YAML::Node& body,
                 std::string& path, JobTarget& job) {
  if (root["kind"]) {
    CCLTUNE_ASSIGN_OR_RETURN(std::string kind, yaml::String(root["kind"], prefix + "kind"));
    if (kind != "CollectiveTuningJob") {
      return FieldError(prefix + "kind",
                        "'" + kind + "' is not allowed (must be CollectiveTuningJob)");
    }
  }
  job.from_job = true;
  path = prefix + "spec.";
  body = root["spec"];
  if (!body || !body.IsMap()) return FieldError(prefix + "spec", "is required (a mapping)");
  if (body["backend"]) {
    CCLTUNE_ASSIGN_OR_RETURN(job.backend, yaml::String(body["backend"], path + "backend"));
    if (job.backend != "nccl" && job.backend != "host") {
      return FieldError(path + "backend", "'" + job.backend + "' is not one of nccl, host");
    }
  }
  return WorldSizeField(body["worldSize"], path + "worldSize", job.world_size);
}

}  // namespace

Result<Plan> ParsePlan(std::string_view text, const PlanLimits& limits,
                       const std::string& field_prefix) {
  CCLTUNE_ASSIGN_OR_RETURN(const YAML::Node root, yaml::Load(text));
  YAML::Node body = root;
  std::string path = field_prefix;
  JobTarget job;
  if (root.IsMap() && (root["apiVersion"] || root["kind"] || root["spec"])) {
    CCLTUNE_RETURN_IF_ERROR(UnwrapJob(root, field_prefix, body, path, job));
  } else {
    CCLTUNE_RETURN_IF_ERROR(yaml::CheckKeys(
        root, field_prefix, {"collectives", "benchmark", "search", "emulatedNodes"}));
  }
  const YAML::Node list = body["collectives"];
  const std::string lpath = Key(path, "collectives");
  if (!list || !list.IsSequence() || list.size() == 0) {
    return FieldError(lpath, "must be a non-empty list of collectives");
  }
  const std::string& backend = job.backend;
  Plan plan;
  plan.job = job;
  for (std::size_t i = 0; i < list.size() && i <= limits.max_collectives; ++i) {
    CCLTUNE_ASSIGN_OR_RETURN(auto c, Collective(list[i], Index(lpath, i), limits, backend));
    plan.collectives.push_back(std::move(c));
  }
  CCLTUNE_RETURN_IF_ERROR(Benchmark(body["benchmark"], Key(path, "benchmark"), plan.benchmark));
  CCLTUNE_RETURN_IF_ERROR(SearchField(body["search"], Key(path, "search"), plan.search));
  CCLTUNE_RETURN_IF_ERROR(
      EmulatedNodesField(body["emulatedNodes"], Key(path, "emulatedNodes"), plan.emulated_nodes));
  CCLTUNE_RETURN_IF_ERROR(ValidatePlan(plan, limits, backend, path));
  return plan;
}

// A plan, even a whole CollectiveTuningJob, is a few KiB; the cap keeps a device or a huge
// file named by mistake from being read without end.
constexpr std::size_t kMaxPlanFileBytes = 16u << 20;

Result<Plan> LoadPlanFile(const std::string& path, const PlanLimits& limits) {
  auto text = ReadTextFile(path, kMaxPlanFileBytes);
  if (!text.ok()) return InvalidArgument("plan file: " + text.status().message());
  auto plan = ParsePlan(*text, limits);
  if (!plan.ok()) return plan.status().WithContext(path);
  return plan;
}

}  // namespace ccltune::core
