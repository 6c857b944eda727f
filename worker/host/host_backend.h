// HostBackend: the `host` communicator backend (docs/design.md §5) — rank processes exchange data
// over a TCP full mesh (tcp_mesh.h) with the algorithms of algorithms.h. Runs anywhere, no
// GPU: what `ccltune tune` uses on a laptop and what CI tests the whole protocol with.
// Used from one thread; the PeerDirectory and CancelToken must outlive it, and prepared
// choices must not outlive it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "worker/host/host_comm.h"
#include "worker/rank/backend.h"
#include "worker/rendezvous/peer_directory.h"

namespace ccltune::worker::host {

struct HostBackendOptions {
  std::string listen_host = "127.0.0.1";  // the pod IP in a cluster
  bool enable_test_choices = false;       // offer `test-hang`, `test-slow` and `test-env…`
  int test_hang_rank = 1;
  // With test choices: CCLTUNE_TEST_ADDED_OP_SECONDS, which `test-env`'s processes get
  // (core/apply/process_setting.h): every op of this process reports that much more.
  double test_added_op_seconds = 0;
  // Buffers rotate while the working set fits this (docs/design.md §2.1's L2 rule, for CPU caches).
  std::size_t cache_budget_bytes = std::size_t{32} << 20;

  // Reads CCLTUNE_ENABLE_TEST_CHOICES=1, CCLTUNE_TEST_HANG_RANK (default 1) and
  // CCLTUNE_TEST_ADDED_OP_SECONDS.
  static HostBackendOptions FromEnv(std::string listen_host = "127.0.0.1");
};

class HostBackend final : public Backend {
 public:
  // Builds the mesh of epoch 0; blocks until every rank joined, the deadline or the token.
  static core::Result<std::unique_ptr<HostBackend>> Create(int rank, int world,
                                                           PeerDirectory& directory,
                                                           const CancelToken& cancel,
                                                           const HostBackendOptions& options,
                                                           Deadline deadline);

  std::string name() const override { return "host"; }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }

  std::vector<ChoiceCandidate> Candidates(const core::Problem& problem) override;
  core::Result<std::unique_ptr<PreparedChoice>> Prepare(const core::Problem& problem,
                                                        const core::ChoiceName& choice,
                                                        const core::BenchmarkSpec& bench) override;
  core::Status Barrier(Deadline deadline) override;
  core::Result<std::vector<double>> AllReduceMax(const std::vector<double>& values,
                                                 Deadline deadline) override;
  core::Status Recover(int epoch, Deadline deadline) override;
  core::FingerprintInput FingerprintInfo() const override;

  // Drops every connection abortively, as a crash would (peers report PeerLost naming this
  // rank). For a rank that gives up, and for failure injection in tests.
  void Disconnect();
  // The communicator, to run an algorithm on caller-owned buffers (tests, the benchmark).
  HostComm& comm() { return comm_; }
  int epoch() const { return epoch_; }

 private:
  HostBackend(int rank, int world, PeerDirectory& directory, const CancelToken& cancel,
              const HostBackendOptions& options, std::unique_ptr<TcpMesh> mesh);
  std::string SkipReason(const core::Problem& problem) const;

  int rank_;
  int world_;
  PeerDirectory& directory_;
  const CancelToken& cancel_;
  HostBackendOptions options_;
  int epoch_ = 0;
  std::vector<std::string> hosts_;
  HostComm comm_;
};

// What the backend factory calls: options from the environment (HostBackendOptions::FromEnv).
core::Result<std::unique_ptr<Backend>> CreateHostBackend(int rank, int world,
                                                         PeerDirectory& directory,
                                                         const CancelToken& cancel,
                                                         const std::string& listen_host,
                                                         Deadline deadline);

}  // namespace ccltune::worker::host
