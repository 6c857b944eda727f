// Building and reading the dispatch table (dispatch_table.h).
#include "runtime/dispatch_table.h"

#include <algorithm>
#include <functional>

#include "core/apply/any_buffer.h"
#include "core/apply/applied_choice.h"
#include "core/results/result_store.h"

namespace ccltune::runtime {
namespace {

const AppliedRun kNccl{};

bool Offered(core::Op op) {
  return op == core::Op::kAllReduce || op == core::Op::kAllGather || op == core::Op::kReduceScatter;
}

// What the runtime offers with an epilogue: sum all-reduces of float types in whole rows
// (the epilogue kernels' domain), of a hidden the kernels take.
bool OfferedEpilogue(const apply::WinnerRecord& r) {
  return r.op == core::Op::kAllReduce && r.redop == core::RedOp::kSum && core::IsFloat(r.dtype) &&
         core::ValidateEpilogue(r.epilogue, "epilogue").ok() &&
         r.epilogue.Tokens(r.bytes, r.dtype) > 0;
}

SliceKey KeyOf(core::Op op, core::Dtype dtype, core::RedOp redop, const core::Epilogue& e) {
  return {op, dtype, redop, e.kind, e.none() ? 0 : e.hidden};
}

std::string SliceName(const SliceKey& key) {
  const auto& [op, dtype, redop, kind, hidden] = key;
  std::string out =
      std::string(core::OpName(op)) + " " + core::DtypeName(dtype) + "/" + core::RedOpName(redop);
  if (kind != core::EpilogueKind::kNone) {
    core::Epilogue e;
    e.kind = kind;
    e.hidden = hidden;
    out += "+" + e.Label();
  }
  return out;
}

core::Problem ProblemOf(const apply::WinnerRecord& r) {
  core::Problem p;
  p.op = r.op;
  p.dtype = r.dtype;
  p.redop = r.redop;
  p.bytes = r.bytes;
  p.epilogue = r.epilogue;
  return p;
}

// Empty when the runtime can run `name` for the record's problem over `cls` buffers.
std::string WhyNot(const std::string& name, const core::Problem& problem, const Capabilities& caps,
                   BufferClass cls) {
  core::Result<apply::ChoiceSpec> spec = ParseRuntimeChoice(name);
  if (!spec.ok()) return spec.status().message();
  return WhyNotRunnable(*spec, problem, caps, cls);
}

AppliedRun Named(const std::string& name, double time_us, std::string reason) {
  AppliedRun run;
  run.name = name;
  run.spec = ParseRuntimeChoice(name).value();  // runnable names parse
  run.time_us = time_us;
  run.reason = std::move(reason);
  return run;
}

double TimeOf(const apply::WinnerRecord& r, const std::string& name) {
  for (const auto& c : r.measured)
    if (c.name == name) return c.time_us;
  return 0;
}

// Empty when direct mode can run `name` on a program's own tensors in a captured call: what
// plain buffers run, and the pooled kernels direct mode runs on registered tensors
// (apply::RunsDirect; runtime/direct/).
std::string WhyNotDirect(const std::string& name, const core::Problem& problem,
                         const Capabilities& caps) {
  std::string plain = WhyNot(name, problem, caps, BufferClass::kPlain);
  if (plain.empty() || !WhyNot(name, problem, caps, BufferClass::kPooled).empty()) return plain;
  return apply::RunsDirect(ParseRuntimeChoice(name).value(), problem.op) ? "" : plain;
}

using WhyNotFn = std::function<std::string(const std::string&)>;

AppliedRun ApplyFor(const apply::WinnerRecord& r, const WhyNotFn& why_not) {
  const std::string why = r.winner == "nccl" ? "" : why_not(r.winner);
  if (why.empty()) return Named(r.winner, TimeOf(r, r.winner), "winner " + r.winner);
  const apply::RuleOutcome o = apply::FastestRunnable(r.measured, why_not, "runnable");
  if (!o.found) {
    return Named("nccl", 0, "winner " + r.winner + ": " + why + "; the record has no nccl time");
  }
  return Named(o.name, o.time_us, "winner " + r.winner + ": " + why + "; " + o.reason);
}

// Plain buffers' runner-up (TableEntry::plain_next): the rule again without `first`, and
// without the choices whose communicators init makes only for the runs entries apply.
AppliedRun RunnerUp(const apply::WinnerRecord& r, const AppliedRun& first, const WhyNotFn& plain) {
  if (first.name == "nccl") return Named("nccl", 0, "plain buffers run NCCL's own");
  const apply::RuleOutcome o = apply::FastestRunnable(
      r.measured,
      [&](const std::string& n) -> std::string {
        if (n == first.name) return "the size's choice";
        std::string why = plain(n);
        if (!why.empty()) return why;
        const apply::ChoiceSpec s = ParseRuntimeChoice(n).value();
        if (s.ctas > 0 || s.compose == apply::Composition::kHierarchical)
          return "it needs a communicator of its own";
        return "";
      },
      "runnable");
  if (!o.found) return Named("nccl", 0, "the record has no nccl time");
  return Named(o.name, o.time_us, "runner-up: " + o.reason);
}

}  // namespace

DispatchTable DispatchTable::Build(const std::vector<apply::WinnerRecord>& records,
                                   const Capabilities& caps) {
  DispatchTable t;
  for (const auto& r : records) {
    if (!Offered(r.op) || r.world_size != caps.world) continue;
    if (!r.epilogue.none() && !OfferedEpilogue(r)) continue;
    const SliceKey key = KeyOf(r.op, r.dtype, r.redop, r.epilogue);
    auto& entries = t.slices_[key];
    const bool seen = std::any_of(entries.begin(), entries.end(),
                                  [&](const TableEntry& e) { return e.bytes == r.bytes; });
    if (seen) continue;
    const core::Problem problem = ProblemOf(r);
    auto by_class = [&](BufferClass cls) {
      return [&, cls](const std::string& n) { return WhyNot(n, problem, caps, cls); };
    };
    // A program's own buffers, eager: also no dearer to issue than NCCL's own, where the
    // record measured that (an eager tune).
    const auto plain = [&](const std::string& n) {
      std::string why = WhyNot(n, problem, caps, BufferClass::kPlain);
      return why.empty() ? apply::WhyNotToIssue(r.measured, n) : why;
    };
    AppliedRun plain_run = ApplyFor(r, plain);
    AppliedRun plain_next = RunnerUp(r, plain_run, plain);
    entries.push_back(
        {r.bytes, r.winner, std::move(plain_run), ApplyFor(r, by_class(BufferClass::kPooled)),
         ApplyFor(r, [&](const std::string& n) { return WhyNotDirect(n, problem, caps); }),
         std::move(plain_next)});
  }
  for (auto& [key, entries] : t.slices_) {
    std::sort(entries.begin(), entries.end(),
              [](const TableEntry& a, const TableEntry& b) { return a.bytes < b.bytes; });
    for (const auto& e : entries) t.sizes_[key].push_back(e.bytes);
  }
  return t;
}

const TableEntry* DispatchTable::Lookup(core::Op op, core::Dtype dtype, core::RedOp redop,
                                        std::uint64_t bytes, const core::Epilogue& epilogue) const {
  const SliceKey key = KeyOf(op, dtype, redop, epilogue);
  auto it = sizes_.find(key);
  if (it == sizes_.end() || it->second.empty()) return nullptr;
  const std::uint64_t bucket = core::NearestLog2Bucket(it->second, bytes);
  const auto& entries = slices_.at(key);
  auto e =
      std::lower_bound(entries.begin(), entries.end(), bucket,
                       [](const TableEntry& entry, std::uint64_t b) { return entry.bytes < b; });
  return e == entries.end() ? nullptr : &*e;
}

const AppliedRun& DispatchTable::Choose(core::Op op, core::Dtype dtype, core::RedOp redop,
                                        std::uint64_t bytes, BufferClass cls,
                                        const core::Epilogue& epilogue) const {
  const TableEntry* e = Lookup(op, dtype, redop, bytes, epilogue);
  return e == nullptr ? kNccl : e->For(cls);
}

const AppliedRun& DispatchTable::ChooseDirect(core::Op op, core::Dtype dtype, core::RedOp redop,
                                              std::uint64_t bytes) const {
  const TableEntry* e = Lookup(op, dtype, redop, bytes);
  return e == nullptr ? kNccl : e->direct;
}

std::size_t DispatchTable::size() const {
  std::size_t n = 0;
  for (const auto& [key, entries] : slices_) n += entries.size();
  return n;
}

std::set<int> DispatchTable::CtasNeeded() const {
  std::set<int> out;
  for (const auto& [key, entries] : slices_) {
    for (const auto& e : entries) {
      for (const AppliedRun* run : {&e.plain, &e.pooled, &e.direct}) {
        if (run->spec.ctas > 0 && run->spec.compose == apply::Composition::kDirect)
          out.insert(run->spec.ctas);
      }
    }
  }
  return out;
}

bool DispatchTable::HierNeeded() const {
  for (const auto& [key, entries] : slices_) {
    for (const auto& e : entries) {
      for (const AppliedRun* run : {&e.plain, &e.pooled, &e.direct}) {
        if (run->spec.compose == apply::Composition::kHierarchical) return true;
      }
    }
  }
  return false;
}

std::size_t DispatchTable::RunnersUp() const {
  std::size_t n = 0;
  for (const auto& [key, entries] : slices_)
    for (const auto& e : entries) n += e.plain_next.name != "nccl";
  return n;
}

std::string DispatchTable::Describe() const {
  std::string out;
  for (const auto& [key, entries] : slices_) {
    int plain = 0, pooled = 0;
    for (const auto& e : entries) {
      plain += e.plain.name != "nccl";
      pooled += e.pooled.name != "nccl";
    }
    if (!out.empty()) out += "; ";
    out += SliceName(key) + ": " + std::to_string(entries.size()) + " sizes, " +
           std::to_string(pooled) + " not NCCL's own (" + std::to_string(plain) +
           " for plain buffers)";
  }
  return out.empty() ? "no tuned sizes" : out;
}

std::string DispatchTable::Digest() const {
  std::string out;
  for (const auto& [key, entries] : slices_) {
    out += SliceName(key) + "\n";
    for (const auto& e : entries)
      out += std::to_string(e.bytes) + " " + e.plain.name + " " + e.pooled.name + " " +
             e.direct.name + " " + e.plain_next.name + "\n";
  }
  return out;
}

}  // namespace ccltune::runtime
