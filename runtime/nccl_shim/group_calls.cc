// Collectives inside ncclGroupStart/End (group_calls.h).
#include "runtime/nccl_shim/group_calls.h"

#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/gpu/nccl_api.h"
#include "runtime/nccl_shim/comm_registry.h"
#include "runtime/nccl_shim/shim_log.h"

namespace ccltune::shim {
namespace {

struct Pending {
  runtime::Call call;
  ncclComm_t comm;
  ForwardFn forward;
  std::shared_ptr<CommEntry> entry;  // null: not a communicator of ccltune-nccl
};

// nccl-tests -g 8 with -a aggregation holds a few dozen; a group this large is forwarded.
constexpr std::size_t kMaxPending = 1024;

thread_local int g_depth = 0;
thread_local std::vector<Pending> g_pending;
thread_local bool g_overflowed = false;

bool SameCollective(const runtime::Call& a, const runtime::Call& b) {
  return a.op == b.op && a.nccl_type == b.nccl_type && a.nccl_op == b.nccl_op && a.count == b.count;
}

// The communicator's size and this rank in it, asked of NCCL once.
std::pair<int, int> SizeAndRank(const Pending& p) {
  std::lock_guard<std::mutex> lock(p.entry->mu);
  if (p.entry->size < 0 && gpu::Nccl().CommCount(p.comm, &p.entry->size) != ncclSuccess) {
    p.entry->size = -1;
  }
  if (p.entry->rank < 0 && gpu::Nccl().CommUserRank(p.comm, &p.entry->rank) != ncclSuccess) {
    p.entry->rank = -1;
  }
  return {p.entry->size, p.entry->rank};
}

// Why the held calls cannot be served as a group (empty: they may, once contexts exist).
// The group must hold every rank of its communicators: this thread then drives the whole
// clique, and nothing made here waits for a rank another thread would bring.
std::string WhyNotGroup(const std::vector<Pending>& calls) {
  if (calls.size() < 2) return "one call";
  std::set<int> ranks;
  std::set<ncclComm_t> comms;
  for (const Pending& p : calls) {
    if (!p.entry) return "communicator not made through ccltune-nccl";
    if (!p.entry->blocking) return "non-blocking communicator";
    if (!p.call.dtype || !p.call.redop || p.call.count == 0) return "call not tuned";
    if (!SameCollective(p.call, calls[0].call)) return "different collectives";
    if (!comms.insert(p.comm).second) return "several calls on one communicator";
    const auto [size, rank] = SizeAndRank(p);
    if (size != static_cast<int>(calls.size()) || rank < 0 || rank >= size ||
        !ranks.insert(rank).second) {
      return "not one call for every rank of the communicators";
    }
  }
  return std::string();
}

// Makes the missing contexts, one thread per communicator: each context's setup is
// collective and this thread drives every rank. Each setup is bounded by the runtime's
// timeout, so the joins are too.
std::string MakeContexts(const std::vector<Pending>& calls) {
  std::vector<const Pending*> untried;
  for (const Pending& p : calls) {
    std::lock_guard<std::mutex> lock(p.entry->mu);
    if (p.entry->state == CommEntry::State::kUntried) untried.push_back(&p);
  }
  if (untried.empty()) return std::string();
  for (const Pending* p : untried) {
    if (Capturing(p->call.stream)) return ForwardName(Forward::kCapture);
  }
  std::vector<std::thread> threads;
  for (const Pending* p : untried) {
    threads.emplace_back([p] {
      std::lock_guard<std::mutex> lock(p->entry->mu);
      if (p->entry->state == CommEntry::State::kUntried) MakeContext(p->comm, *p->entry);
    });
  }
  for (std::thread& t : threads) t.join();
  return std::string();
}

std::string WhyNotServed(const std::vector<Pending>& calls) {
  for (const Pending& p : calls) {
    std::lock_guard<std::mutex> lock(p.entry->mu);
    if (p.entry->state != CommEntry::State::kServing) return ForwardName(Forward::kPlain);
    if (!p.entry->ctx->RunsOwnKernel(p.call)) return "a call's winner runs in NCCL";
  }
  return std::string();
}

ncclResult_t ForwardAll(const std::vector<Pending>& calls, const std::string& why) {
  ncclResult_t first = ncclSuccess;
  for (const Pending& p : calls) {
    if (p.entry) p.entry->Count(Forward::kInGroup);
    if (DebugOn()) Debug(Describe(p.call) + " -> NCCL (in a group: " + why + ")");
    const ncclResult_t r = p.forward(p.call, p.comm);
    if (first == ncclSuccess) first = r;
  }
  return first;
}

// Every call runs our kernel: checked just before, with the same table and buffers.
ncclResult_t ServeAll(const std::vector<Pending>& calls) {
  for (const Pending& p : calls) {
    std::lock_guard<std::mutex> lock(p.entry->mu);
    core::Result<runtime::RuntimeComm::Served> served = p.entry->ctx->Serve(p.call);
    if (!served.ok()) {
      Note(Describe(p.call) + " (in a group): " + served.status().message());
      return ResultOf(served.status());
    }
    if (!served->ran) return p.forward(p.call, p.comm);  // into NCCL's open group
    ++p.entry->ran_live[served->what];
    if (DebugOn()) Debug(Describe(p.call) + " -> " + std::string(served->what) + " (group)");
  }
  return ncclSuccess;
}

}  // namespace

void EnterGroup() { ++g_depth; }

bool LeaveGroup() {
  if (g_depth == 0) return false;
  return --g_depth == 0;
}

bool InGroup() { return g_depth > 0; }

ncclResult_t Defer(const runtime::Call& call, ncclComm_t comm, ForwardFn forward) {
  if (!g_overflowed && g_pending.size() < kMaxPending) {
    g_pending.push_back({call, comm, forward, CommRegistry::Get().Find(comm)});
    return ncclSuccess;
  }
  if (!g_overflowed) {
    g_overflowed = true;
    std::vector<Pending> held;
    held.swap(g_pending);
    const ncclResult_t r = ForwardAll(held, "more calls than the shim holds");
    if (r != ncclSuccess) return r;
  }
  std::shared_ptr<CommEntry> e = CommRegistry::Get().Find(comm);
  if (e) e->Count(Forward::kInGroup);
  return forward(call, comm);
}

ncclResult_t FlushGroup(bool may_serve) {
  std::vector<Pending> calls;
  calls.swap(g_pending);
  g_overflowed = false;
  if (calls.empty()) return ncclSuccess;
  std::string why = may_serve ? WhyNotGroup(calls) : "simulated";
  if (why.empty()) why = MakeContexts(calls);
  if (why.empty()) why = WhyNotServed(calls);
  if (why.empty()) return ServeAll(calls);
  return ForwardAll(calls, why);
}

}  // namespace ccltune::shim
