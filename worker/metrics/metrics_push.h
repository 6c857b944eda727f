// PushMetrics: a rank's end-of-job push of its Registry to a Prometheus Pushgateway, so the
// figures outlive the pod (docs/design.md §7), through prometheus-cpp's Gateway (libcurl).
// The group (core/metrics/push_group.h, which the controller deletes with the job)
//   {url}/metrics/job/ccltune/ccltune_job/<jobId>/rank/<rank>
// is one per rank of each job; a retry of the same rank replaces its families (the Gateway's
// Push is an HTTP POST, which replaces every family it carries, and a rank always carries all).
//
// Blocking, for at most `timeout_seconds`: prometheus-cpp 1.0.1 sets no curl timeout, so the
// push runs on the Gateway's own thread and is abandoned at the deadline (that thread ends
// when the server answers or drops the connection, or with the process).
// Thread-safe: no shared state.
#pragma once

#include <string>

#include "core/base/status.h"
#include "core/metrics/metrics.h"

namespace ccltune::worker {

// Where prometheus::Gateway(host, port, …) pushes: host = "http[s]://name", port = the port
// and any path prefix ("9091/gw"), since the Gateway builds "<host>:<port>/metrics/job/…".
struct GatewayAddress {
  std::string host;
  std::string port;
};
// "http[s]://host[:port][/prefix]" (port defaults to the scheme's; the Pushgateway's usual is
// 9091). InvalidArgument naming the problem otherwise.
core::Result<GatewayAddress> ParseGatewayUrl(const std::string& url);

// OK on HTTP 2xx. InvalidArgument for a URL that is not "http[s]://host[:port][/prefix]";
// Unavailable for a connection failure or a non-2xx answer; Timeout at the deadline.
core::Status PushMetrics(const std::string& url, const std::string& job_id, int rank,
                         const core::Registry& registry, double timeout_seconds);

}  // namespace ccltune::worker
