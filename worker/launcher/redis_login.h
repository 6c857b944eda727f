// Connecting to the Redis cache a user named (--redis, CCLTUNE_REDIS_URL) and checking that it
// lets us in. A Redis with a password answers every command "NOAUTH Authentication required",
// which says nothing of how to give one; the errors here say which flag and variable carry it.
#pragma once

#include <memory>

#include "core/base/status.h"
#include "core/redis/redis_client.h"

namespace ccltune::worker {

// Connects (blocking: the client's connect timeout, AUTH, SELECT) and PINGs, so a missing or
// wrong password is caught before anything else talks to the server.
core::Result<std::unique_ptr<core::RedisClient>> ConnectCache(
    const core::RedisEndpoint& endpoint, const core::RedisOptions& options = {});

// `st` with how to give the right password when Redis refused us (NOAUTH, WRONGPASS, a
// password a server without one does not take), else `st` unchanged:
// "the Redis at redis://HOST:PORT/0 requires a password (NOAUTH): give it in the URL, --redis
// redis://:PASSWORD@HOST:PORT/0, or in env CCLTUNE_REDIS_PASSWORD".
core::Status ExplainAuth(const core::Status& st, const core::RedisEndpoint& endpoint);

}  // namespace ccltune::worker
