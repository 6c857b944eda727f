// The controller process: informers (jobs, owned pods) feed a work queue; worker threads
// run JobReconciler while this replica leads; one HTTP server answers /metrics and the
// results API, another, on its own port and threads, /healthz and /readyz. Owns every thread
// it starts.
#pragma once

#include <atomic>

#include "controller/app/controller_options.h"
#include "core/base/status.h"

namespace ccltune::controller {

// Runs until `stop` becomes true (SIGTERM). Errors: bad configuration (InvalidArgument),
// port in use.
core::Status RunController(const ControllerOptions& options, const std::atomic<bool>& stop);

}  // namespace ccltune::controller
