// libccltune-nccl's per-call decisions and communicator contexts (serve.h).
#include "runtime/nccl_shim/serve.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "core/gpu/cuda_resources.h"
#include "core/gpu/nccl_api.h"
#include "runtime/nccl_shim/comm_failure.h"
#include "runtime/nccl_shim/comm_registry.h"
#include "runtime/nccl_shim/first_init.h"
#include "runtime/nccl_shim/group_calls.h"
#include "runtime/nccl_shim/rank_buffers.h"
#include "runtime/nccl_shim/real_nccl.h"
#include "runtime/nccl_shim/shim_log.h"
#include "runtime/runtime_config.h"

namespace ccltune::shim {
namespace {

std::string Hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// Why this call cannot be served whatever the context, or kCount when it can be.
Forward Ineligible(const runtime::Call& c, const CommEntry& e) {
  if (!e.blocking) return Forward::kNonBlocking;
  if (!c.dtype || !c.redop) return Forward::kNotTuned;
  if (c.count == 0) return Forward::kEmpty;
  return Forward::kCount;
}

int RankOf(ncclComm_t comm) {
  int rank = -1;
  return gpu::Nccl().CommUserRank(comm, &rank) == ncclSuccess ? rank : -1;
}

ncclResult_t Forwarded(CommEntry& e, Forward why, std::string_view detail, const runtime::Call& c,
                       ncclComm_t comm, ForwardFn forward) {
  e.Count(why);
  if (DebugOn()) {
    const std::string_view name = ForwardName(why);
    Debug(Describe(c) + " -> NCCL (" + std::string(name) +
          (detail.empty() || detail == name ? "" : ": " + std::string(detail)) + ")");
  }
  return forward(c, comm);
}

// One round of the clique's board for this rank's call (buffer_board.h), bounded by the
// runtime's timeout, as a wait for a peer in our kernels is. Under e.mu.
std::optional<RankBuffers> SwapBuffers(CommEntry& e, const runtime::Call& call) {
  const BufferBoard::Post mine{call.send, call.recv, CallReachable(call, e.ctx->devices())};
  return e.board->Exchange(e.ctx->rank(), e.board_round++, mine,
                           core::Clock::now() + e.ctx->timeout());
}

}  // namespace

std::string Describe(const runtime::Call& c) {
  return std::string(core::OpName(c.op)) + " count " + std::to_string(c.count) + " type " +
         std::to_string(static_cast<int>(c.nccl_type)) + " op " +
         std::to_string(static_cast<int>(c.nccl_op)) + " stream " + Hex(c.stream);
}

bool Capturing(cudaStream_t stream) { return gpu::CaptureOf(stream) == gpu::Capture::kYes; }

// One line, on rank 0: served (with init's summary) or plain NCCL and why.
void MakeContext(ncclComm_t comm, CommEntry& e) {
  e.rank = RankOf(comm);
  core::Result<runtime::RuntimeConfig> cfg = runtime::ResolveConfig(nullptr);
  std::string why;
  if (!cfg.ok()) {
    why = cfg.status().message();
  } else if (cfg->source.results_file.empty() && cfg->source.redis_url.empty()) {
    why = "no winners source (set CCLTUNE_RESULTS_FILE or CCLTUNE_REDIS_URL)";
  } else {
    cfg->log_summary = false;
    auto ctx = runtime::RuntimeComm::Init(comm, std::move(cfg).value());
    if (ctx.ok()) e.mode = (*ctx)->Mode();
    if (!ctx.ok()) {
      why = "libccltune init failed: " + ctx.status().message();
    } else if ((*ctx)->Empty()) {
      why = (*ctx)->summary() + FirstInitMismatch((*ctx)->nodes());
      if ((*ctx)->OneProcess()) {
        e.unused_ctx = std::move(ctx).value();  // closed at destroy (comm_registry.h)
      } else {
        (void)runtime::RuntimeComm::Close(std::move(ctx).value());
      }
    } else {
      e.ctx = std::move(ctx).value();
      if (e.ctx->OneProcess()) e.board = BufferBoard::For(e.ctx->clique(), e.ctx->world());
      e.SetFailure(e.ctx->failure());
      e.state = CommEntry::State::kServing;
      if (e.rank == 0) {
        Note("comm " + Hex(comm) + ": served by tuned winners: " + e.ctx->summary() +
             FirstInitMismatch(e.ctx->nodes()));
      }
      return;
    }
  }
  e.state = CommEntry::State::kPlain;
  e.plain_why = why;
  if (e.rank <= 0) Note("comm " + Hex(comm) + ": plain NCCL: " + why);
}

ncclResult_t ResultOf(const core::Status& st) {
  return st.code() == core::StatusCode::kInvalidArgument ? ncclInvalidArgument : ncclInternalError;
}

bool ShimOn() {
  static const bool on = [] {
    const char* v = std::getenv("CCLTUNE_NCCL");
    const ShimSwitch sw = ShimSwitchOf(v);
    if (sw == ShimSwitch::kInvalid) {
      Note(std::string("CCLTUNE_NCCL: '") + v + "' is not one of on, off: forwarding every call");
      return false;
    }
    if (sw == ShimSwitch::kOff) return false;
    return Real().found && Real().same_version;
  }();
  return on;
}

ncclResult_t Collective(const runtime::Call& call, ncclComm_t comm, ForwardFn forward) {
  if (!ShimOn()) return forward(call, comm);
  if (InGroup()) return Defer(call, comm, forward);
  const std::shared_ptr<CommEntry> e = CommRegistry::Get().Find(comm);
  if (!e) {
    if (DebugOn()) Debug(Describe(call) + " -> NCCL (communicator not made through ccltune-nccl)");
    return forward(call, comm);
  }
  // Our kernels stopped the GPU context: nothing more runs on this communicator.
  if (const ncclResult_t failed = FailedResult(*e); failed != ncclSuccess) return failed;
  if (const Forward why = Ineligible(call, *e); why != Forward::kCount) {
    return Forwarded(*e, why, {}, call, comm, forward);
  }
  std::unique_lock<std::mutex> lock(e->mu);
  if (e->state == CommEntry::State::kUntried) {
    if (Capturing(call.stream)) {
      lock.unlock();
      return Forwarded(*e, Forward::kCapture, {}, call, comm, forward);
    }
    MakeContext(comm, *e);
  }
  if (e->state != CommEntry::State::kServing) {
    lock.unlock();  // plain_why no longer changes once plain
    return Forwarded(*e, Forward::kPlain, e->plain_why, call, comm, forward);
  }
  // Threads of one process: the peers' buffers, where they change the choice of a call
  // being captured (rank_buffers.h says why only then).
  std::optional<RankBuffers> peers;
  if (e->board && Capturing(call.stream) && e->ctx->GroupBuffersChangeChoice(call)) {
    peers = SwapBuffers(*e, call);
  }
  core::Result<runtime::RuntimeComm::Served> served =
      e->ctx->Serve(peers ? peers->With(call) : call);
  if (!served.ok()) {
    if (const ncclResult_t failed = FailedResult(*e); failed != ncclSuccess) return failed;
    Note("comm " + Hex(comm) + ": " + Describe(call) + ": " + served.status().message());
    return ResultOf(served.status());
  }
  if (served->ran) {
    ++e->ran_live[served->what];
    if (DebugOn()) Debug(Describe(call) + " -> " + std::string(served->what));
    return ncclSuccess;
  }
  lock.unlock();  // `what` is a view of the table, which outlives this call
  const Forward why = served->slower_here                                  ? Forward::kSlowerHere
                      : served->what == runtime::RuntimeComm::kStagingFull ? Forward::kStagingFull
                      : served->what == runtime::RuntimeComm::kNoRecords   ? Forward::kNoRecords
                                                                           : Forward::kWinnerNccl;
  return Forwarded(*e, why, served->what, call, comm, forward);
}

void Release(ncclComm_t comm, const char* how, bool abort, bool forget) {
  const std::shared_ptr<CommEntry> e =
      forget ? CommRegistry::Get().Remove(comm) : CommRegistry::Get().Find(comm);
  if (!e) return;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    e->FoldRan();  // its keys are views into the context's table
    if (e->rank < 0) e->rank = RankOf(comm);
    for (std::unique_ptr<runtime::RuntimeComm>* ctx : {&e->ctx, &e->unused_ctx}) {
      if (*ctx && abort) {
        // No collective goodbye: the peers may be gone. Our children go the same way.
        runtime::RuntimeComm::Drop(std::move(*ctx));
      } else if (*ctx) {
        const core::Status st = runtime::RuntimeComm::Close(std::move(*ctx));
        if (!st.ok()) Note("comm " + Hex(comm) + ": context teardown: " + st.message());
      }
    }
    if (e->state == CommEntry::State::kServing) {
      e->state = CommEntry::State::kPlain;
      e->plain_why = std::string("communicator ") + how;
    }
  }
  if (forget && e->rank <= 0) {
    Note("comm " + Hex(comm) + " " + how + (e->mode.empty() ? "" : " (ranks in " + e->mode + ")") +
         ": " + e->Summary());
  }
}

bool BlockingOf(const ncclConfig_t* config, const bool* parent) {
  if (config != nullptr && config->blocking != NCCL_CONFIG_UNDEF_INT) return config->blocking != 0;
  if (config == nullptr && parent != nullptr) return *parent;
  const char* env = std::getenv("NCCL_COMM_BLOCKING");
  return env == nullptr || std::atoi(env) != 0;
}

}  // namespace ccltune::shim
