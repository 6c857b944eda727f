// Collectives inside ncclGroupStart/End (group_calls.h).
#include "runtime/nccl_shim/group_calls.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/gpu/nccl_api.h"
#include "runtime/nccl_shim/comm_failure.h"
#include "runtime/nccl_shim/comm_registry.h"
#include "runtime/nccl_shim/rank_buffers.h"
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
  std::set<ncclComm_t> comms;
  for (const Pending& p : calls) {
    if (!p.entry) return "communicator not made through ccltune-nccl";
    if (!p.entry->blocking) return "non-blocking communicator";
    if (!p.call.dtype || !p.call.redop || p.call.count == 0) return "call not tuned";
    if (!SameCollective(p.call, calls[0].call)) return "different collectives";
    if (!comms.insert(p.comm).second) return "several calls on one communicator";
  }
  std::set<int> ranks;  // NCCL is asked only of groups that passed the checks above
  for (const Pending& p : calls) {
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

// Every rank's buffers, by rank, when every rank's device reaches each of them
// (rank_buffers.h): then the calls are handed them and the pull kernels serve plain buffers.
// `devices`: the clique's, as its context recorded them at init.
std::optional<RankBuffers> BuffersByRank(const std::vector<Pending>& calls,
                                         const std::vector<int>& devices) {
  const std::size_t n = calls.size();
  RankBuffers b{std::vector<const void*>(n), std::vector<void*>(n)};
  for (const Pending& p : calls) {
    if (!CallReachable(p.call, devices)) return std::nullopt;
    b.send[p.entry->rank] = p.call.send;
    b.recv[p.entry->rank] = p.call.recv;
  }
  return b;
}

// The driver is asked (BuffersByRank) only for a group being captured (rank_buffers.h says
// why) and only where the buffers would change the choice: the pull kernels' sizes, not
// those where a kernel on plain buffers or NCCL wins anyway.
std::optional<RankBuffers> GroupBuffers(const std::vector<Pending>& calls) {
  const Pending& p = calls[0];
  if (!Capturing(p.call.stream)) return std::nullopt;
  std::lock_guard<std::mutex> lock(p.entry->mu);
  if (p.entry->state != CommEntry::State::kServing ||
      !p.entry->ctx->GroupBuffersChangeChoice(p.call)) {
    return std::nullopt;
  }
  return BuffersByRank(calls, p.entry->ctx->devices());
}

// Each call, carrying `b` when set: the calls point into `b`, which must outlive them.
std::vector<runtime::Call> WithBuffers(const std::vector<Pending>& calls,
                                       const std::optional<RankBuffers>& b) {
  std::vector<runtime::Call> out;
  for (const Pending& p : calls) out.push_back(b ? b->With(p.call) : p.call);
  return out;
}

std::string ShapeKey(std::string_view choice, const runtime::Call& c) {
  return std::string(choice) + " " + Describe(c);
}

// Empty when every call runs our kernel; `*fresh` says whether some rank runs this choice
// for this call's shape for the first time.
std::string WhyNotServed(const std::vector<Pending>& calls, const std::vector<runtime::Call>& cs,
                         bool* fresh) {
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const Pending& p = calls[i];
    std::lock_guard<std::mutex> lock(p.entry->mu);
    if (p.entry->state != CommEntry::State::kServing) return ForwardName(Forward::kPlain);
    const std::string_view choice = p.entry->ctx->OwnKernelFor(cs[i]);
    if (choice.empty()) return "a call's winner runs in NCCL";
    *fresh |= p.entry->group_shapes.count(ShapeKey(choice, cs[i])) == 0;
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

// One rank's call, by our kernel (checked just before, with the same table and buffers).
// `staging_full`: the kernel's signature found no staging left, nothing was enqueued (every
// rank of the process fills its staging alike, so all of the group's ranks say so at once).
core::Status ServeOne(const Pending& p, const runtime::Call& c, bool* staging_full) {
  std::lock_guard<std::mutex> lock(p.entry->mu);
  core::Result<runtime::RuntimeComm::Served> served = p.entry->ctx->Serve(c);
  if (!served.ok()) return served.status();
  *staging_full = !served->ran && served->what == runtime::RuntimeComm::kStagingFull;
  if (*staging_full) return core::Status::Ok();
  if (!served->ran) return core::Internal("the group's winner changed to NCCL's own");
  ++p.entry->ran_live[served->what];
  p.entry->group_shapes.insert(ShapeKey(served->what, c));
  if (DebugOn()) Debug(Describe(c) + " -> " + std::string(served->what) + " (group)");
  return core::Status::Ok();
}

// The first launch of a kernel may load its module, and loading can wait for the device's
// running kernels, ours among them, which wait for the peers' launches: from one thread that
// is a deadlock. So a shape's first group is launched from one thread per rank (eager only:
// a captured launch runs nothing), later ones from this thread.
ncclResult_t ServeAll(const std::vector<Pending>& calls, const std::vector<runtime::Call>& cs,
                      bool fresh) {
  std::vector<core::Status> st(calls.size());
  std::unique_ptr<bool[]> full(new bool[calls.size()]());
  if (fresh && !Capturing(cs[0].stream)) {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      threads.emplace_back([&, i] { st[i] = ServeOne(calls[i], cs[i], &full[i]); });
    }
    for (std::thread& t : threads) t.join();
  } else {
    for (std::size_t i = 0; i < calls.size(); ++i) st[i] = ServeOne(calls[i], cs[i], &full[i]);
  }
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (st[i].ok()) continue;
    Note(Describe(cs[i]) + " (in a group): " + st[i].message());
    return ResultOf(st[i]);
  }
  const std::size_t n_full =
      static_cast<std::size_t>(std::count(full.get(), full.get() + calls.size(), true));
  if (n_full == calls.size())
    return ForwardAll(calls, std::string(runtime::RuntimeComm::kStagingFull));
  if (n_full > 0) {
    Note("a group's ranks disagreed about their staging room: " + std::to_string(n_full) + " of " +
         std::to_string(calls.size()) + " found none");
    return ncclInternalError;
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
  // Our kernels stopped a GPU context of the group: nothing of it runs, as outside groups.
  for (const Pending& p : calls) {
    if (!p.entry) continue;
    if (const ncclResult_t failed = FailedResult(*p.entry); failed != ncclSuccess) return failed;
  }
  std::string why = may_serve ? WhyNotGroup(calls) : "simulated";
  if (why.empty()) why = MakeContexts(calls);
  if (!why.empty()) return ForwardAll(calls, why);
  // Named, not a temporary: the calls point into it until the last kernel is enqueued (a
  // temporary here once handed the kernels freed pointers: cudaErrorMisalignedAddress).
  const std::optional<RankBuffers> buffers = GroupBuffers(calls);
  const std::vector<runtime::Call> cs = WithBuffers(calls, buffers);
  bool fresh = false;
  why = WhyNotServed(calls, cs, &fresh);
  if (why.empty()) return ServeAll(calls, cs, fresh);
  return ForwardAll(calls, why);
}

}  // namespace ccltune::shim
