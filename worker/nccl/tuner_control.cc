// dlopen of the in-process tuner and RAII forcing (tuner_control.h).
#include "worker/nccl/tuner_control.h"

#include <dlfcn.h>

#include <utility>

namespace ccltune::worker::nccl {

core::Result<TunerControl> TunerControl::Load(const std::string& path) {
  // RTLD_NOW | RTLD_LOCAL, as NCCL opens plugins: the loader returns the same object to
  // both of us because the path is the same.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return core::NotFound("dlopen " + path + ": " + (err ? err : "unknown error"));
  }
  TunerControl t;
  t.handle_ = handle;
  t.path_ = path;
  t.set_ = reinterpret_cast<CcltuneTunerSetFn>(dlsym(handle, "ccltune_inproc_tuner_set"));
  t.clear_ = reinterpret_cast<CcltuneTunerClearFn>(dlsym(handle, "ccltune_inproc_tuner_clear"));
  t.stats_ = reinterpret_cast<CcltuneTunerStatsFn>(dlsym(handle, "ccltune_inproc_tuner_stats"));
  if (t.set_ == nullptr || t.clear_ == nullptr || t.stats_ == nullptr ||
      dlsym(handle, "ncclTunerPlugin_v5") == nullptr) {
    return core::FailedPrecondition(path + " is not a ccltune in-process tuner (symbols missing)");
  }
  return t;
}

TunerControl::TunerControl(TunerControl&& other) noexcept
    : handle_(other.handle_),
      path_(std::move(other.path_)),
      set_(other.set_),
      clear_(other.clear_),
      stats_(other.stats_) {
  other.handle_ = nullptr;
}

TunerControl& TunerControl::operator=(TunerControl&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
    set_ = other.set_;
    clear_ = other.clear_;
    stats_ = other.stats_;
  }
  return *this;
}

TunerControl::~TunerControl() {
  // Kept loaded on purpose: NCCL may still hold the same object; dlclose only drops our
  // reference count.
  if (handle_ != nullptr) dlclose(handle_);
}

CcltuneTunerStats TunerControl::Stats() const {
  CcltuneTunerStats s{};
  stats_(&s);
  return s;
}

ForcedScope::ForcedScope(const TunerControl* tuner, int coll, int algo, int proto, int channels)
    : tuner_(tuner) {
  if (tuner_ != nullptr) tuner_->Set(coll, algo, proto, channels);
}

ForcedScope::~ForcedScope() {
  if (tuner_ != nullptr) tuner_->Clear();
}

int TunerColl(core::Op op) {
  switch (op) {
    case core::Op::kAllReduce:
      return kCcltuneCollAllReduce;
    case core::Op::kAllGather:
      return kCcltuneCollAllGather;
    case core::Op::kReduceScatter:
      return kCcltuneCollReduceScatter;
    case core::Op::kBroadcast:
      return kCcltuneCollBroadcast;
    default:
      return -1;
  }
}

}  // namespace ccltune::worker::nccl
