#include <gtest/gtest.h>

#include "core/redis/redis_client.h"

namespace ccltune::core {
namespace {

TEST(ParseRedisUrl, Defaults) {
  auto ep = ParseRedisUrl("redis://cache");
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();
  EXPECT_EQ(ep->host, "cache");
  EXPECT_EQ(ep->port, 6379);
  EXPECT_EQ(ep->db, 0);
  EXPECT_EQ(ep->password, "");
  EXPECT_EQ(ep->ToString(), "redis://cache:6379/0");
}

TEST(ParseRedisUrl, FullFormAndPercentDecoding) {
  auto ep = ParseRedisUrl("redis://:p%40ss%3Aw%2Fd@ccltune-redis:6380/15");
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();
  EXPECT_EQ(ep->host, "ccltune-redis");
  EXPECT_EQ(ep->port, 6380);
  EXPECT_EQ(ep->db, 15);
  // A ':' inside a password without a user is kept distinct from "user:password".
  EXPECT_EQ(ep->password, ":p@ss:w/d");
  EXPECT_EQ(ep->ToString().find("p@ss"), std::string::npos);
  auto user = ParseRedisUrl("redis://alice:secret@h/1");
  ASSERT_TRUE(user.ok());
  EXPECT_EQ(user->password, "alice:secret");
  auto plain = ParseRedisUrl("redis://:secret@h");
  EXPECT_EQ(plain->password, "secret");
  auto v6 = ParseRedisUrl("redis://[::1]:7000/2");
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 7000);
  EXPECT_EQ(v6->ToString(), "redis://[::1]:7000/2");
}

TEST(ParseRedisUrl, ErrorsNameTheProblem) {
  struct Case {
    const char* url;
    const char* says;
  };
  for (const Case& c :
       {Case{"rediss://h:6379", "TLS"}, Case{"http://h", "must start with redis://"},
        Case{"h:6379", "must start with redis://"}, Case{"redis://h:0", "port '0' is not allowed"},
        Case{"redis://h:65536", "port"}, Case{"redis://h:abc", "port 'abc'"},
        Case{"redis://h:", "port"},
        Case{"redis://h/16", "db '16' is not allowed (must be an integer 0..15)"},
        Case{"redis://h/x", "db 'x'"}, Case{"redis://:6379", "host is empty"},
        Case{"redis://:pa%4@h", "percent-encoding"}, Case{"redis://:@h", "empty password"},
        Case{"redis://secret@h", "':password' or 'user:password'"},
        Case{"redis://h/0?timeout=1", "query"}}) {
    auto ep = ParseRedisUrl(c.url);
    ASSERT_FALSE(ep.ok()) << c.url;
    EXPECT_EQ(ep.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(ep.status().message().find(c.says), std::string::npos)
        << c.url << " -> " << ep.status().message();
  }
}

// CCLTUNE_REDIS_PASSWORD (+ CCLTUNE_REDIS_USERNAME) over the URL's password, as AUTH sends it.
TEST(ApplyRedisCredentials, PasswordAndUserOverrideTheUrl) {
  RedisEndpoint ep;
  ep.password = "from-url";
  ApplyRedisCredentials(nullptr, nullptr, &ep);
  EXPECT_EQ(ep.password, "from-url");
  ApplyRedisCredentials("reader", "", &ep);  // an empty password is none
  EXPECT_EQ(ep.password, "from-url");
  ApplyRedisCredentials(nullptr, "pw", &ep);
  EXPECT_EQ(AuthArgv(ep), (std::vector<std::string>{"AUTH", "pw"}));
  ApplyRedisCredentials(nullptr, "p:w", &ep);  // no user: the colon is the password's
  EXPECT_EQ(AuthArgv(ep), (std::vector<std::string>{"AUTH", "p:w"}));
  ApplyRedisCredentials("ccltune-telemetry", "p:w", &ep);
  EXPECT_EQ(AuthArgv(ep), (std::vector<std::string>{"AUTH", "ccltune-telemetry", "p:w"}));
}

}  // namespace
}  // namespace ccltune::core
