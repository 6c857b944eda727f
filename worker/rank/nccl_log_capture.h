// This rank's NCCL INFO log, captured so the summary can say how many nodes NCCL formed and
// which transports join the ranks, as NCCL reports them (core/node/nccl_init_log.h). Only where
// the user left NCCL's logging alone: NCCL_DEBUG and NCCL_DEBUG_FILE unset. NCCL reads them
// at its first call, so Start runs before the backend. While captured, NCCL's warnings go to
// the file too; it is kept (and named in the log) unless the rank read it successfully.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/node/nccl_init_log.h"

namespace ccltune::worker {

class NcclLogCapture {
 public:
  // Sets NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET and NCCL_DEBUG_FILE (a file of this
  // job, attempt and rank under the temp directory), or records why not.
  static NcclLogCapture Start(const std::string& job_id, int attempt, int rank);

  // What NCCL logged so far, the file removed; FailedPrecondition saying why there is none.
  core::Result<core::NcclInitLog> Read();
  // The variables Start set (none when it did not capture): processes this rank starts leave
  // them out, so their NCCL logs go to captures of their own, not into this rank's file.
  std::vector<std::string> SetVariables() const;

 private:
  std::string path_;
  std::string problem_;
};

}  // namespace ccltune::worker
