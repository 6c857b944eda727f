// The backend's handle on the in-process tuner plugin (inproc_tuner_api.h): the same
// loaded object NCCL uses, found by dlopen() of the same path.
#pragma once

#include <string>

#include "core/base/status.h"
#include "core/plan/types.h"
#include "worker/nccl/inproc_tuner_api.h"

namespace ccltune::worker::nccl {

// The in-process tuner's collective id of an op; -1 for allToAll (send/recv).
int TunerColl(core::Op op);

class TunerControl {
 public:
  static core::Result<TunerControl> Load(const std::string& path);
  TunerControl(TunerControl&& other) noexcept;
  TunerControl& operator=(TunerControl&& other) noexcept;
  TunerControl(const TunerControl&) = delete;
  ~TunerControl();

  void Set(int coll, int algo, int proto, int channels) const { set_(coll, algo, proto, channels); }
  void Clear() const { clear_(); }
  CcltuneTunerStats Stats() const;
  const std::string& path() const { return path_; }

 private:
  TunerControl() = default;
  void* handle_ = nullptr;
  std::string path_;
  CcltuneTunerSetFn set_ = nullptr;
  CcltuneTunerClearFn clear_ = nullptr;
  CcltuneTunerStatsFn stats_ = nullptr;
};

// Forces a choice for the enqueues made while it lives. NCCL picks the algorithm at enqueue
// (also under graph capture), so the scope must cover the launch until the communicator
// left ncclInProgress — not the kernel's execution.
class ForcedScope {
 public:
  ForcedScope(const TunerControl* tuner, int coll, int algo, int proto, int channels);
  ~ForcedScope();
  ForcedScope(const ForcedScope&) = delete;
  ForcedScope& operator=(const ForcedScope&) = delete;

 private:
  const TunerControl* tuner_;
};

}  // namespace ccltune::worker::nccl
