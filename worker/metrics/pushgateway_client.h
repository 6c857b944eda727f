// PushgatewayClient: pushes a Registry's text exposition to a Prometheus Pushgateway when a
// worker ends, so results outlive the pod (DESIGN §7). HTTP PUT (replaces the whole group) to
//   {url}/metrics/job/ccltune/ccltune_job/<jobId>/rank/<rank>
// so each rank of each job is its own group and a retry of the same rank overwrites it.
// Grouping-key values outside [A-Za-z0-9_.-] are sent in the Pushgateway's `@base64` form.
//
// Plain sockets, `http://` only (a Pushgateway inside the cluster; no TLS library in the
// worker). Blocking: Push() returns by `deadline` (connect, send and the answer are all bounded;
// only DNS resolution of a host name is not). Thread-safe: no shared state.
#pragma once

#include <string>

#include "core/metrics.h"
#include "core/status.h"
#include "worker/deadline.h"

namespace ccltune::worker {

class PushgatewayClient {
 public:
  // Parses "http://host[:port][/prefix]" (port defaults to 80; Pushgateway's usual is 9091).
  // InvalidArgument naming the problem for anything else (https://, no host, bad port).
  static core::Result<PushgatewayClient> Create(const std::string& url);

  // PUT of `registry`'s exposition to this rank's group. OK on HTTP 2xx; Unavailable for
  // connection failures and non-2xx answers (with the status line and the start of the body);
  // Timeout when the deadline passes.
  core::Status Push(const std::string& job_id, int rank, const core::Registry& registry,
                    Deadline deadline) const;

  // Create() then Push(), for callers that push once.
  static core::Status Push(const std::string& url, const std::string& job_id, int rank,
                           const core::Registry& registry, Deadline deadline);

  // "/prefix/metrics/job/ccltune/ccltune_job/<jobId>/rank/<rank>"
  std::string GroupingPath(const std::string& job_id, int rank) const;

  const std::string& host() const { return host_; }
  int port() const { return port_; }

 private:
  PushgatewayClient(std::string host, int port, std::string prefix)
      : host_(std::move(host)), port_(port), prefix_(std::move(prefix)) {}
  std::string host_;
  int port_ = 80;
  std::string prefix_;  // path before /metrics, without a trailing '/'
};

// "<name>/<value>" or "<name>@base64/<url-safe base64>" (Pushgateway's encoding for values
// with '/' or other characters a path segment cannot carry, and for empty values).
std::string GroupingSegment(const std::string& name, const std::string& value);

}  // namespace ccltune::worker
