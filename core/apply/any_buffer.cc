// The any-buffer rule (any_buffer.h).
#include "core/apply/any_buffer.h"

namespace ccltune::apply {
namespace {

// Our kernels that touch only this rank's buffers and the peers' staging.
bool LocalBuffersOnly(const ChoiceSpec& s, core::Op op) {
  if (s.peer == PeerKind::kOneShot) return s.push || s.ll;
  if (s.peer == PeerKind::kTwoShot) return op == core::Op::kReduceScatter && s.push;
  return false;
}

// `choice` read as a choice of `backend`, then as the kernels' spec.
core::Result<ChoiceSpec> SpecOf(const core::ChoiceName& choice, const std::string& backend) {
  CCLTUNE_ASSIGN_OR_RETURN(const core::ChoiceName parsed,
                           core::ParseChoice(choice.ToString(), backend));
  return SpecFromChoice(parsed);
}

}  // namespace

ChoiceSpec UnstagedOf(ChoiceSpec s) {
  s.staged = false;
  return s;
}

std::string WhyNotAnyBuffer(const ChoiceSpec& s, core::Op op) {
  if (s.buffers == BufferMode::kRegistered) {
    return "nccl-reg needs the application's buffers registered with NCCL";
  }
  if (s.buffers == BufferMode::kSymmetric) {
    return "nccl-symm needs the application's buffers in an NCCL symmetric window";
  }
  if (s.compose != Composition::kPeer) return "";
  if (s.staged) return "";  // copied through the runtime's peer memory (staged.h)
  if (s.fused) {
    return "a fused kernel reads the peers' inputs or writes their out and residual: runs only "
           "when input, out and residual come from ccltuneMemAlloc";
  }
  if (!LocalBuffersOnly(s, op)) {
    return "reads or writes the peers' buffers: runs only on buffers from ccltuneMemAlloc";
  }
  return "";
}

std::string WhyNotEager(const ChoiceSpec& s) {
  if (s.ctas <= 0) return "";
  return "NCCL on a communicator of " + std::to_string(s.ctas) +
         " CTAs is not run on an eager program's own buffers (timed alone, it ran slower than "
         "NCCL's own beside the program's kernels)";
}

std::string WhyNotEager(const core::ChoiceName& choice, const std::string& backend) {
  if (backend == "host") return "";
  core::Result<ChoiceSpec> spec = SpecOf(choice, backend);
  return spec.ok() ? WhyNotEager(*spec) : spec.status().message();
}

bool ServesOwnBuffers(const core::ChoiceName& choice, core::Op op, const std::string& backend,
                      bool eager) {
  return ReachOf(choice, op, backend) == core::BufferReach::kAny &&
         (!eager || WhyNotEager(choice, backend).empty());
}

bool RunsDirect(const ChoiceSpec& s, core::Op op) {
  return op == core::Op::kAllReduce && s.compose == Composition::kPeer && !s.staged && !s.fused &&
         !s.push && !s.ll && (s.peer == PeerKind::kOneShot || s.peer == PeerKind::kTwoShot);
}

core::BufferReach ReachOf(const ChoiceSpec& s, core::Op op) {
  if (WhyNotAnyBuffer(s, op).empty()) return core::BufferReach::kAny;
  return RunsDirect(s, op) ? core::BufferReach::kRegistered : core::BufferReach::kPooled;
}

core::BufferReach ReachOf(const core::ChoiceName& choice, core::Op op, const std::string& backend) {
  if (backend == "host") {  // no kernels: any buffer, but the test stand-in for a pooled one
    return WhyNotAnyBuffer(choice, op, backend).empty() ? core::BufferReach::kAny
                                                        : core::BufferReach::kPooled;
  }
  core::Result<ChoiceSpec> spec = SpecOf(choice, backend);
  return spec.ok() ? ReachOf(*spec, op) : core::BufferReach::kPooled;
}

std::string WhyNotAnyBuffer(const core::ChoiceName& choice, core::Op op,
                            const std::string& backend) {
  if (backend == "host") {
    // The host backend's algorithms work on the caller's buffers; there is no pool.
    core::Result<core::ChoiceName> parsed = core::ParseChoice(choice.ToString(), backend);
    if (!parsed.ok()) return parsed.status().message();
    return parsed->base == kTestPooledChoice
               ? "test-pooled stands for a kernel that runs only on pooled buffers"
               : "";
  }
  core::Result<ChoiceSpec> spec = SpecOf(choice, backend);
  if (!spec.ok()) return spec.status().message();
  return WhyNotAnyBuffer(*spec, op);
}

}  // namespace ccltune::apply
