// A fake NCCL for the profiler plugin's tests: it dlopen()s the built
// libnccl-profiler-ccltune.so as NCCL's src/plugin/profiler.cc does (RTLD_NOW | RTLD_LOCAL,
// dlsym of ncclProfiler_v6, _v5, _v4) and drives it as NCCL 2.27-2.29 do for one collective
// (src/plugin/profiler.cc, collTaskAppend and hostStreamPlanTask in src/enqueue.cc,
// src/transport/profiler.cc), NCCL 2.28.9's way:
//   the mask  one int per process (NCCL's ncclProfilerEventMask), whose address every init
//           gets and the plugin may change at any time; each API call loads it once, first,
//           and its task keeps that value (the task's mask below);
//   v5, v6  the API call: GroupApi start, CollApi start (parent GroupApi; the application's
//           func, count, datatype, graphCaptured), CollApi stop, GroupApi states 23 and 24
//           (no args), GroupApi stop;
//           the launch: Group start, Coll start (parent CollApi, coll.parentGroup Group),
//           Coll stop, Group stop;
//   v4      the launch only: Group start, Coll start (parent Group), Coll stop, Group stop;
//   all     per channel, on the proxy thread: KernelCh start (parent Coll, pTimer = the
//           GPU's start), recordEventState(KernelChStop, pTimer = the GPU's stop), KernelCh stop.
// Each step only when NCCL would take it under the task's mask, and a null handle is never
// stopped or updated, as in NCCL. As NCCL, the Coll says ncclInt8 and the count in bytes for
// allGather and broadcast, and numbers each func's launches (seqNumber, not advanced for a
// graph-captured call unless KernelCh is on and the Group or CollApi got a handle).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugin/profiler/profiler_abi.h"

namespace ccltune::testing {

namespace prof_abi = plugin::profiler::abi;

class LoadedProfiler {
 public:
  explicit LoadedProfiler(const std::string& path);  // CCLTUNE_PROFILER_SO by default
  ~LoadedProfiler();
  LoadedProfiler(const LoadedProfiler&) = delete;
  LoadedProfiler& operator=(const LoadedProfiler&) = delete;
  bool ok() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  void* Symbol(const char* name) const;  // dlsym, nullptr when not exported
  const prof_abi::ProfilerV4* v4() const;
  const prof_abi::ProfilerV5* v5() const;
  const prof_abi::ProfilerV6* v6() const;

 private:
  void* handle_ = nullptr;
  std::string error_;
};
std::string ProfilerPath();  // $CCLTUNE_PROFILER_SO

// NCCL's process-wide activation mask, as the plugin last set it.
int FakeNcclMask();

// One collective as the application calls it and NCCL describes it, and what its channels
// stamp.
struct FakeColl {
  std::optional<std::uint64_t> seq;  // the Coll's seqNumber; unset: NCCL's own count
  std::string func = "AllReduce";
  std::size_t count = 0;                 // the application's (CollApi)
  std::string datatype = "ncclFloat32";  // the application's (CollApi)
  bool graph_captured = false;
  std::uint8_t channels = 1;  // the descriptor's nChannels
  std::string algo = "RING";
  std::string proto = "SIMPLE";
  std::vector<std::pair<std::uint64_t, std::uint64_t>> stamps;  // per channel: start, stop
};

// The handles of one launched collective, between its launch and its channels.
struct Launch {
  int mask = 0;  // the task's activation mask
  void* group_api = nullptr;
  void* coll_api = nullptr;
  void* group = nullptr;
  void* coll = nullptr;
};

// One communicator of one rank: init in the constructor, finalize in the destructor.
class FakeComm {
 public:
  FakeComm(const LoadedProfiler& lib, int version, std::uint64_t comm_hash, int rank, int nranks);
  ~FakeComm();
  FakeComm(const FakeComm&) = delete;
  FakeComm& operator=(const FakeComm&) = delete;

  int init_rc() const { return init_rc_; }
  int mask() const { return FakeNcclMask(); }  // the process's, after this init
  void* context() const { return ctx_; }

  // The launching thread's part, up to (not including) the Coll's stop.
  Launch Begin(const FakeColl& coll);
  // The Coll's and Group's stops.
  void End(const Launch& launch);
  // The proxy thread's part: every channel of `coll.stamps`.
  void Channels(const Launch& launch, const FakeColl& coll);
  // Begin, End, Channels: the usual order (the kernel finishes after the launch returned).
  void Collective(const FakeColl& coll);

  // Raw calls through the table of this version, for the edge cases.
  void* StartRaw(std::uint64_t type, void* parent);
  // A Coll as NCCL describes `coll`, its parentObj `parent` (NCCL's: the CollApi handle).
  void* StartCollRaw(const FakeColl& coll, std::uint64_t seq, void* parent);
  int Stop(void* handle);
  int Record(void* handle, int state, prof_abi::EventStateArgs* args);

 private:
  struct Spec;
  void* Start(const Spec& spec);
  void ApiCall(const FakeColl& coll, Launch& l);
  void* StartColl(const FakeColl& coll, const Launch& l);

  const LoadedProfiler& lib_;
  int version_;
  int init_rc_ = -1;
  void* ctx_ = nullptr;
  std::map<std::string, std::uint64_t> seq_;  // NCCL's comm->seqNumber[func]
};

// What the plugin logged through NCCL's logger since the last Clear.
struct LogLine {
  int level;
  std::string text;
};
void ClearProfilerLog();
std::vector<LogLine> ProfilerLog();
prof_abi::DebugLogger ProfilerLogger();

}  // namespace ccltune::testing
