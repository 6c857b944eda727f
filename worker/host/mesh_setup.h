// Builds a TcpMesh for one epoch: listen on an ephemeral port, publish "host,port,nonce"
// through the PeerDirectory under "host-addr-<epoch>", connect to every higher rank and
// accept every lower one, each connection authenticated by a hello pair (rank, epoch and
// the directory nonces), so stray or stale connections are dropped, not adopted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "worker/deadline.h"
#include "worker/host/tcp_mesh.h"
#include "worker/rendezvous/peer_directory.h"

namespace ccltune::worker::host {

struct MeshConfig {
  int rank = 0;
  int world = 1;
  int epoch = 0;
  std::string listen_host = "127.0.0.1";  // the pod IP in a cluster
};

// A rank's published address; `nonce` is random per rank and epoch.
struct PeerAddress {
  std::string host;
  int port = 0;
  std::uint64_t nonce = 0;
  std::string ToString() const;  // "127.0.0.1,40123,9f3c..."
};
core::Result<PeerAddress> ParsePeerAddress(const std::string& text);
std::string DirectoryName(int epoch);  // "host-addr-<epoch>"

// Blocks until every peer is connected, the deadline passes (Timeout naming the ranks still
// missing) or the token cancels. All ranks of the epoch must call it.
core::Result<std::unique_ptr<TcpMesh>> BuildTcpMesh(const MeshConfig& config,
                                                    PeerDirectory& directory,
                                                    const CancelToken& cancel, Deadline deadline);

}  // namespace ccltune::worker::host
