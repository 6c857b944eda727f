// FreePort(): a TCP port on 127.0.0.1 that was free a moment ago (the kernel picks it).
// Another process may take it before you bind: callers that start servers retry on failure.
#pragma once

namespace ccltune::testing {

// Returns 0 when no socket could be bound (out of file descriptors, no loopback).
int FreePort();

}  // namespace ccltune::testing
