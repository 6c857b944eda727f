#include "worker/rank/progress.h"

#include "core/base/sizes.h"
#include "core/plan/plan.h"

namespace ccltune::worker {

ProgressPublisher::ProgressPublisher(core::RedisClient& redis, JobControl& control,
                                     const core::JobKeys& keys, std::size_t total)
    : redis_(redis), control_(control), keys_(keys) {
  Write("0 " + std::to_string(total));
}

void ProgressPublisher::Write(const std::string& value) {
  if (control_.RedisLost()) return;  // declared already: do not wait out the deadline again
  auto r = redis_.Command({"SET", keys_.Progress(), value, "EX", "3600"});
  if (!r.ok()) control_.ReportRedisError(r.status());
}

void ProgressPublisher::OnRecord(const core::ResultRecord& r) {
  last_ = std::string(core::OpName(r.op)) + " " + core::DtypeName(r.dtype) + " ";
  if (!r.epilogue.none()) {  // "+ residualRmsNorm,hidden=4096 32 tokens (256KiB)"
    last_ += "+ " + r.epilogue.Label() + " " + std::to_string(r.epilogue.Tokens(r.bytes, r.dtype)) +
             " tokens (" + core::FormatSize(r.bytes) + ")";
  } else {
    last_ += core::FormatSize(r.bytes);
  }
  last_ += " -> " + r.winner;
}

void ProgressPublisher::OnProblemDone(std::size_t index, std::size_t total) {
  Write(std::to_string(index) + " " + std::to_string(total) + " " + last_);
}

}  // namespace ccltune::worker
