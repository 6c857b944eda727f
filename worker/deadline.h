// The worker's names for core/base/deadline.h: every wait in a worker has a deadline and a
// CancelToken (abort flag / lost peer, from Redis).
#pragma once

#include "core/base/deadline.h"

namespace ccltune::worker {

using core::CancelToken;
using core::Clock;
using core::Deadline;
using core::DeadlineIn;
using core::Expired;
using core::NeverCancel;
using core::SecondsLeft;

}  // namespace ccltune::worker
