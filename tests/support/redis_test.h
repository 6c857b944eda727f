// A gtest fixture with a real redis-server (RedisServer) and a client connected to it, for
// tests that run ccltune against Redis and read what it wrote. Header-only: only gtest
// programs include it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "core/redis/redis_client.h"
#include "tests/support/redis_server.h"

namespace ccltune::testing {

class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = RedisServer::Start();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    redis_ = std::move(s).value();
    auto c = core::RedisClient::Connect(redis_->endpoint());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(c).value();
  }
  // Another client of the same server (one per thread: a client is not thread-safe; or a new
  // one after the server restarted); null, with the test failed, when none connects.
  std::unique_ptr<core::RedisClient> Connect() {
    auto c = core::RedisClient::Connect(redis_->endpoint());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<core::RedisClient> client_;
};

}  // namespace ccltune::testing
