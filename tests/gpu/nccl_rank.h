// TEST HELPER: one forked rank's NCCL communicator, its ncclUniqueId spread through files in
// a directory the ranks share (FilePeerDirectory), for tests and benchmarks that drive an
// application-style communicator (the runtime's) rather than the backend's.
#pragma once

#include <nccl.h>

#include <string>

namespace ccltune::testing {

// nullptr when the id exchange (60 s bound) or ncclCommInitRank failed.
ncclComm_t SharedNcclComm(const std::string& dir, int rank, int world);

}  // namespace ccltune::testing
