// One communicator's profiler state (NCCL's tuner example keeps state the same way: in the
// context init returns, never in globals). It turns NCCL's Coll and KernelCh events into one
// ccltuneTelemetryRecordCall per collective: op, dtype and bytes from the Coll descriptor, the
// algorithm and protocol that ran, the channels, NCCL's sequence number, and the GPU time =
// the last channel's %globaltimer stop - the first channel's start.
// Thread-safety: StartColl, StartKernelCh, RecordKernelStop and Stop may run on any thread
// at once (NCCL's launching thread, CUDA host callbacks for graphs, its proxy thread); none
// of them blocks or allocates.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "plugin/profiler/coll_event_pool.h"
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

struct CommIdentity {
  std::uint64_t comm_hash = 0;
  int rank = 0;
  int nranks = 0;
};

class ProfilerContext {
 public:
  // nullptr (and the reason logged through `log`) when telemetry is off or a setting is bad:
  // then NCCL gets an activation mask of 0 and does no profiling work.
  static std::unique_ptr<ProfilerContext> Create(const CommIdentity& comm, abi::DebugLogger log);
  ProfilerContext(const CommIdentity& comm, std::size_t in_flight, abi::DebugLogger log);

  // The mask NCCL gets from init while a context exists.
  static constexpr int kActivationMask =
      static_cast<int>(abi::kProfileColl | abi::kProfileKernelCh);

  // The handle NCCL keeps for the Coll, or nullptr: not profiled.
  void* StartColl(const CollStart& coll);
  // A channel of the Coll `parent` (NCCL passes back the Coll's handle): the same handle,
  // or nullptr for a parent that is not ours or a channel beyond the announced ones.
  void* StartKernelCh(void* parent, std::uint64_t start_ns);
  // For a handle from StartColl or StartKernelCh: the channel's stop stamp; the stop.
  static void RecordKernelStop(void* handle, std::uint64_t stop_ns);
  static void Stop(void* handle);

 private:
  void Finish(CollEvent* event);
  void DropFull();

  CommIdentity comm_;
  abi::DebugLogger log_;
  CollEventPool pool_;
  std::atomic<bool> full_logged_{false};
};

}  // namespace ccltune::plugin::profiler
