#include "tests/profiler/fake_nccl.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <type_traits>

namespace ccltune::testing {
namespace {

namespace abi = prof_abi;

// NCCL's masks for starting each event (src/plugin/profiler.cc, 2.28.9).
constexpr std::uint64_t kGroupApiMask =
    abi::kProfileGroupApi | abi::kProfileP2pApi | abi::kProfileCollApi | abi::kProfileKernelLaunch |
    abi::kProfileGroup | abi::kProfileColl | abi::kProfileP2p | abi::kProfileProxyOp |
    abi::kProfileProxyStep | abi::kProfileKernelCh | abi::kProfileNetPlugin;
constexpr std::uint64_t kCollApiMask = abi::kProfileCollApi | abi::kProfileColl |
                                       abi::kProfileProxyOp | abi::kProfileProxyStep |
                                       abi::kProfileKernelCh | abi::kProfileNetPlugin;
constexpr std::uint64_t kGroupMask = abi::kProfileGroup | abi::kProfileColl | abi::kProfileP2p |
                                     abi::kProfileProxyOp | abi::kProfileProxyStep |
                                     abi::kProfileKernelCh | abi::kProfileNetPlugin;
constexpr std::uint64_t kCollMask = abi::kProfileColl | abi::kProfileProxyOp |
                                    abi::kProfileProxyStep | abi::kProfileKernelCh |
                                    abi::kProfileNetPlugin;
constexpr int kGroupStartApiStop = 23;
constexpr int kGroupEndApiStart = 24;

// ncclProfilerEventMask: one per process.
int nccl_mask = 0;

bool Would(int mask, std::uint64_t any_of) {
  return (static_cast<std::uint64_t>(mask) & any_of) != 0;
}

// ncclTypeSize for the names the tests use; 1 for any other.
std::size_t TypeSize(const std::string& nccl_datatype) {
  static const std::map<std::string, std::size_t> kSizes = {
      {"ncclFloat32", 4}, {"ncclBfloat16", 2}, {"ncclFloat16", 2}, {"ncclInt32", 4},
      {"ncclUint32", 4},  {"ncclInt64", 8},    {"ncclUint64", 8},  {"ncclFloat64", 8}};
  auto it = kSizes.find(nccl_datatype);
  return it == kSizes.end() ? 1 : it->second;
}

// collTaskAppend: allGather and broadcast run as bytes.
bool AsBytes(const std::string& func) { return func == "AllGather" || func == "Broadcast"; }

std::mutex log_mu;
std::vector<LogLine> log_lines;

void Logger(int level, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  std::lock_guard lock(log_mu);
  log_lines.push_back({level, buf});
}

}  // namespace

void ClearProfilerLog() {
  std::lock_guard lock(log_mu);
  log_lines.clear();
}

std::vector<LogLine> ProfilerLog() {
  std::lock_guard lock(log_mu);
  return log_lines;
}

prof_abi::DebugLogger ProfilerLogger() { return &Logger; }

int FakeNcclMask() { return __atomic_load_n(&nccl_mask, __ATOMIC_RELAXED); }

std::string ProfilerPath() {
  const char* p = std::getenv("CCLTUNE_PROFILER_SO");
  return p ? p : "";
}

LoadedProfiler::LoadedProfiler(const std::string& path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) error_ = std::string("dlopen ") + path + ": " + dlerror();
}

LoadedProfiler::~LoadedProfiler() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* LoadedProfiler::Symbol(const char* name) const {
  return handle_ ? dlsym(handle_, name) : nullptr;
}

const prof_abi::ProfilerV4* LoadedProfiler::v4() const {
  return static_cast<const prof_abi::ProfilerV4*>(Symbol("ncclProfiler_v4"));
}
const prof_abi::ProfilerV5* LoadedProfiler::v5() const {
  return static_cast<const prof_abi::ProfilerV5*>(Symbol("ncclProfiler_v5"));
}
const prof_abi::ProfilerV6* LoadedProfiler::v6() const {
  return static_cast<const prof_abi::ProfilerV6*>(Symbol("ncclProfiler_v6"));
}

// One event to start, whichever version's descriptor carries it.
struct FakeComm::Spec {
  std::uint64_t type = 0;
  void* parent = nullptr;
  void* group = nullptr;  // a Coll's legacy group parent (v4's parentObj)
  const FakeColl* coll = nullptr;
  std::uint64_t seq = 0;
  std::uint8_t channel = 0;
  std::uint64_t ptimer = 0;
};

namespace {

template <typename Coll>
void FillColl(Coll& c, const FakeColl& f, std::uint64_t seq) {
  c.seqNumber = seq;
  c.func = f.func.c_str();
  c.count = AsBytes(f.func) ? f.count * TypeSize(f.datatype) : f.count;
  c.datatype = AsBytes(f.func) ? "ncclInt8" : f.datatype.c_str();
  c.nChannels = f.channels;
  c.nWarps = 16;
  c.algo = f.algo.c_str();
  c.proto = f.proto.c_str();
}

// NCCL zero-fills each descriptor ({0}) before setting the fields of its type.
template <typename Descr, typename Spec>
Descr Build(const Spec& s, bool v4) {
  Descr d{};
  d.type = static_cast<decltype(d.type)>(s.type);
  d.parentObj = s.parent;
  if (s.type == abi::kProfileColl && s.coll != nullptr) {
    FillColl(d.coll, *s.coll, s.seq);
    if constexpr (!std::is_same_v<Descr, abi::EventDescrV4>) d.coll.parentGroup = s.group;
    if (v4) d.parentObj = s.group;
  } else if constexpr (!std::is_same_v<Descr, abi::EventDescrV4>) {
    if (s.type == abi::kProfileCollApi && s.coll != nullptr) {
      d.collApi.func = s.coll->func.c_str();
      d.collApi.count = s.coll->count;
      d.collApi.datatype = s.coll->datatype.c_str();
      d.collApi.graphCaptured = s.coll->graph_captured;
    }
  }
  if (s.type == abi::kProfileKernelCh) {
    d.kernelCh.channelId = s.channel;
    d.kernelCh.pTimer = s.ptimer;
  }
  return d;
}

}  // namespace

FakeComm::FakeComm(const LoadedProfiler& lib, int version, std::uint64_t comm_hash, int rank,
                   int nranks)
    : lib_(lib), version_(version) {
  const char* name = "fake-comm";
  int* mask = &nccl_mask;
  if (version_ == 4) {
    init_rc_ = lib_.v4()->init(&ctx_, mask, name, comm_hash, 1, nranks, rank, ProfilerLogger());
  } else if (version_ == 5) {
    init_rc_ = lib_.v5()->init(&ctx_, comm_hash, mask, name, 1, nranks, rank, ProfilerLogger());
  } else {
    init_rc_ = lib_.v6()->init(&ctx_, comm_hash, mask, name, 1, nranks, rank, ProfilerLogger());
  }
}

FakeComm::~FakeComm() {
  // NCCL finalizes only a context init set.
  if (ctx_ == nullptr) return;
  if (version_ == 4) lib_.v4()->finalize(ctx_);
  if (version_ == 5) lib_.v5()->finalize(ctx_);
  if (version_ == 6) lib_.v6()->finalize(ctx_);
}

void* FakeComm::Start(const Spec& s) {
  void* handle = nullptr;
  if (version_ == 4) {
    auto d = Build<abi::EventDescrV4>(s, true);
    lib_.v4()->startEvent(ctx_, &handle, &d);
  } else if (version_ == 5) {
    auto d = Build<abi::EventDescrV5>(s, false);
    lib_.v5()->startEvent(ctx_, &handle, &d);
  } else {
    auto d = Build<abi::EventDescrV6>(s, false);
    lib_.v6()->startEvent(ctx_, &handle, &d);
  }
  return handle;
}

void* FakeComm::StartRaw(std::uint64_t type, void* parent) {
  Spec s;
  s.type = type;
  s.parent = parent;
  return Start(s);
}

void* FakeComm::StartCollRaw(const FakeColl& coll, std::uint64_t seq, void* parent) {
  Spec s;
  s.type = abi::kProfileColl;
  s.parent = parent;
  s.coll = &coll;
  s.seq = seq;
  return Start(s);
}

int FakeComm::Stop(void* handle) {
  if (version_ == 4) return lib_.v4()->stopEvent(handle);
  return version_ == 5 ? lib_.v5()->stopEvent(handle) : lib_.v6()->stopEvent(handle);
}

int FakeComm::Record(void* handle, int state, prof_abi::EventStateArgs* args) {
  if (version_ == 4) return lib_.v4()->recordEventState(handle, state, args);
  return version_ == 5 ? lib_.v5()->recordEventState(handle, state, args)
                       : lib_.v6()->recordEventState(handle, state, args);
}

// ncclProfilerStartGroupApiEvent .. StopCollApiEvent, in collTaskAppend.
void FakeComm::ApiCall(const FakeColl& coll, Launch& l) {
  // Loaded first, before the plugin hears of the call; the task keeps it.
  l.mask = FakeNcclMask();
  if (version_ < 5) return;  // 2.27: no API events
  if (Would(l.mask, kGroupApiMask)) l.group_api = StartRaw(abi::kProfileGroupApi, nullptr);
  if (Would(l.mask, kCollApiMask)) {
    Spec s;
    s.type = abi::kProfileCollApi;
    s.parent = l.group_api;
    s.coll = &coll;
    l.coll_api = Start(s);
  }
  if (l.coll_api) Stop(l.coll_api);
  if (l.group_api) Record(l.group_api, kGroupStartApiStop, nullptr);
  if (l.group_api) Record(l.group_api, kGroupEndApiStart, nullptr);
  if (l.group_api) Stop(l.group_api);
}

// ncclProfilerStartTaskEvents: the Coll, and NCCL's seqNumber for the func.
void* FakeComm::StartColl(const FakeColl& coll, const Launch& l) {
  std::uint64_t& next = seq_[coll.func];
  void* handle = nullptr;
  if (Would(l.mask, kCollMask)) {
    Spec s;
    s.type = abi::kProfileColl;
    s.parent = l.coll_api;
    s.group = l.group;
    s.coll = &coll;
    s.seq = coll.seq.value_or(next);
    handle = Start(s);
  }
  const bool kernel_ch = Would(l.mask, abi::kProfileKernelCh);
  if (!coll.graph_captured || ((l.group || l.coll_api) && kernel_ch)) ++next;
  return handle;
}

Launch FakeComm::Begin(const FakeColl& coll) {
  Launch l;
  ApiCall(coll, l);
  if (Would(l.mask, kGroupMask)) l.group = StartRaw(abi::kProfileGroup, nullptr);
  l.coll = StartColl(coll, l);
  return l;
}

void FakeComm::End(const Launch& l) {
  if (l.coll) Stop(l.coll);
  if (l.group) Stop(l.group);
}

void FakeComm::Channels(const Launch& l, const FakeColl& coll) {
  // NCCL adds the profiler proxy op, which reports the channels, only for such a task.
  if (!Would(l.mask, abi::kProfileKernelCh)) return;
  for (std::size_t c = 0; c < coll.stamps.size(); ++c) {
    Spec s;
    s.type = abi::kProfileKernelCh;
    s.parent = l.coll;
    s.channel = static_cast<std::uint8_t>(c);
    s.ptimer = coll.stamps[c].first;
    void* ch = Start(s);
    if (ch == nullptr) continue;
    abi::EventStateArgs args{};
    args.kernelCh.pTimer = coll.stamps[c].second;
    Record(ch, abi::kKernelChStop, &args);
    Stop(ch);
  }
}

void FakeComm::Collective(const FakeColl& coll) {
  const Launch l = Begin(coll);
  End(l);
  Channels(l, coll);
}

}  // namespace ccltune::testing
