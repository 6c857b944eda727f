// One communicator's profiler state (NCCL's tuner example keeps state the same way: in the
// context init returns, never in globals, save NCCL's own process-wide mask: duty_cycle.h).
// ABI v5/v6 (the duty cycle): each CollApi event is one call counted (an UNTIMED record: op,
// dtype and bytes from the application's call, the choice last seen for its size) and the
// decision whether to time the next call; a timed call's Coll and KernelCh events give its
// times (a COUNTED record): the algorithm and protocol that ran, the channels, NCCL's sequence
// number, and the GPU time = the last channel's %globaltimer stop - the first channel's start.
// ABI v4: no CollApi event; every call is timed and its one record (flags 0) counts it.
// Thread-safety: StartCollApi, StartColl, StartKernelCh, RecordKernelStop and Stop may run on
// any thread at once (the application's, NCCL's launching thread, CUDA host callbacks for
// graphs, its proxy thread); none of them blocks or allocates.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "plugin/profiler/choice_table.h"
#include "plugin/profiler/coll_event_pool.h"
#include "plugin/profiler/nccl_names.h"
#include "plugin/profiler/profiler_abi.h"
#include "plugin/profiler/profiler_settings.h"

namespace ccltune::plugin::profiler {

// What a Coll event's descriptor says, whichever ABI version carried it.
struct CollStart {
  std::uint64_t seq = 0;
  const char* func = nullptr;
  std::size_t count = 0;
  const char* datatype = nullptr;
  int channels = 0;
  const char* algo = nullptr;
  const char* proto = nullptr;
};

// What a CollApi event's descriptor says: the application's call, before NCCL changed its
// count and datatype (allGather and broadcast reach the Coll as ncclInt8 bytes).
struct CollApiStart {
  const char* func = nullptr;
  std::size_t count = 0;
  const char* datatype = nullptr;
  bool graph_captured = false;  // the call is being captured into a CUDA graph
};

struct CommIdentity {
  std::uint64_t comm_hash = 0;
  int rank = 0;
  int nranks = 0;
};

class ProfilerContext {
 public:
  // nullptr (and the reason logged through `log`) when telemetry is off or a setting is bad:
  // then NCCL gets an activation mask of 0 and does no profiling work. `duty_cycle`: ABI v5
  // or v6, whose CollApi events count the calls (duty_cycle.h); false for v4.
  static std::unique_ptr<ProfilerContext> Create(const CommIdentity& comm, abi::DebugLogger log,
                                                 bool duty_cycle);
  ProfilerContext(const CommIdentity& comm, std::size_t in_flight, abi::DebugLogger log,
                  bool duty_cycle);

  // The mask NCCL gets from init while a context exists: v5/v6 the decision for the first
  // call (numbered 0: timed), v4 kAlwaysMask.
  static int InitialMask(bool duty_cycle);

  // A call as the application made it: counted, and the mask set for the next call. NCCL
  // gets no handle (it then never stops the event).
  void* StartCollApi(const CollApiStart& api);
  // The handle NCCL keeps for the Coll, or nullptr: not profiled.
  void* StartColl(const CollStart& coll);
  // A channel of the Coll `parent` (NCCL passes back the Coll's handle): the same handle,
  // or nullptr for a parent that is not ours or a channel beyond the announced ones.
  void* StartKernelCh(void* parent, std::uint64_t start_ns);
  // For a handle from StartColl or StartKernelCh: the channel's stop stamp; the stop.
  static void RecordKernelStop(void* handle, std::uint64_t stop_ns);
  static void Stop(void* handle);

 private:
  // A timed Coll of the duty cycle: teaches the table its choice, re-syncs the op's call
  // count with NCCL's and returns the dtype its application call gave (nullptr: unknown).
  const char* LearnFromColl(const OpName& op, std::uint64_t bytes, const CollStart& coll);
  void Finish(CollEvent* event);
  void DropFull();

  CommIdentity comm_;
  abi::DebugLogger log_;
  const bool duty_cycle_;
  CollEventPool pool_;
  ChoiceTable choices_;
  // Per op (OpName::id): the calls counted so far = NCCL's seqNumber of the next eager one.
  std::array<std::atomic<std::uint64_t>, kOpIds> api_calls_{};
  std::atomic<bool> full_logged_{false};
};

}  // namespace ccltune::plugin::profiler
