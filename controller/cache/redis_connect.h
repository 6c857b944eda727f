// Redis connections of the controller: one cached client per (thread, URL, password), so
// the reconcile workers and the HTTP threads reuse connections instead of dialling Redis on
// every request. RedisClient itself drops a broken connection and redials on the next
// command. Short bounds: a reconcile or an API request must not sit on a dead Redis.
#pragma once

#include <string>

#include "core/redis/redis_client.h"

namespace ccltune::controller {

// The calling thread's client for `url` (the URL's password wins over `password`). Valid
// until the thread exits. Blocks at most ~1.5 s connecting.
core::Result<core::RedisClient*> ThreadRedis(const std::string& url, const std::string& password);

}  // namespace ccltune::controller
