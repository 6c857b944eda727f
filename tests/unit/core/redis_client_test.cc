// RedisClient against a real redis-server: commands, error replies, command timeouts,
// reconnects across restarts, AUTH/ACL users, SELECT, transactions.
#include "core/redis/redis_client.h"

#include <gtest/gtest.h>

#include <ctime>
#include <thread>

#include "tests/support/redis_server.h"

namespace ccltune::core {
namespace {

using namespace std::chrono_literals;
using testing::RedisServer;
using testing::RedisServerOptions;

std::unique_ptr<RedisServer> StartServer(RedisServerOptions o = {}) {
  auto s = RedisServer::Start(std::move(o));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

std::unique_ptr<RedisClient> ConnectTo(const RedisEndpoint& ep, RedisOptions o = {}) {
  auto c = RedisClient::Connect(ep, o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

TEST(RedisClient, RunsCommandsAndDecodesReplies) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  auto c = ConnectTo(server->endpoint());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->Command({"SET", "k", std::string("a\0b", 3)})->type, RedisValue::Type::kStatus);
  EXPECT_EQ(c->Command({"GET", "k"})->str, std::string("a\0b", 3));  // binary safe
  EXPECT_TRUE(c->Command({"GET", "missing"})->is_nil());
  EXPECT_EQ(c->Command({"INCRBY", "n", "41"})->integer, 41);
  ASSERT_TRUE(c->Command({"RPUSH", "l", "x", "y"}).ok());
  auto list = c->Command({"LRANGE", "l", "0", "-1"});
  ASSERT_EQ(list->elements.size(), 2u);
  EXPECT_EQ(list->elements[1].str, "y");
  auto t = c->ServerTime();
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR(*t, static_cast<double>(std::time(nullptr)), 5.0);
}

TEST(RedisClient, ErrorRepliesNameTheCommandNotTheArguments) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  auto c = ConnectTo(server->endpoint());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->Command({"SET", "s", "secret-value"}).ok());
  auto r = c->Command({"lpush", "s", "secret-arg"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("redis LPUSH failed: WRONGTYPE"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().find("secret"), std::string::npos);
  auto bad = c->Command({"NOSUCHCOMMAND"});
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
  EXPECT_TRUE(c->Command({"PING"}).ok());  // the connection is still usable
}

TEST(RedisClient, BlockingCommandTimesOutInsteadOfHanging) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  RedisOptions o;
  o.command_timeout = 200ms;
  auto c = ConnectTo(server->endpoint(), o);
  ASSERT_TRUE(c);
  // BLPOP would answer nil after 5 s; a Timeout status proves the client gave up first.
  auto r = c->Command({"BLPOP", "never", "5"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout) << r.status().ToString();
  EXPECT_NE(r.status().message().find("BLPOP"), std::string::npos);
  EXPECT_NE(r.status().message().find("200 ms"), std::string::npos);
  EXPECT_EQ(c->Command({"PING"})->str, "PONG");  // reconnected for the next command
}

TEST(RedisClient, ReconnectsAfterServerRestart) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  auto c = ConnectTo(server->endpoint());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->Command({"PING"}).ok());
  ASSERT_TRUE(server->Restart().ok());
  EXPECT_EQ(c->Command({"PING"})->str, "PONG");
  // Down for a while: Command keeps retrying until the server is back. The server is
  // restarted from this (main) thread: see RedisServer's note on PR_SET_PDEATHSIG.
  ASSERT_TRUE(server->Kill().ok());
  Result<RedisValue> r = Internal("not run");
  std::thread client([&] { r = c->Command({"SET", "after", "restart"}); });
  std::this_thread::sleep_for(400ms);
  EXPECT_TRUE(server->Restart().ok());
  client.join();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(c->Command({"GET", "after"})->str, "restart");
}

TEST(RedisClient, GivesUpAfterReconnectDeadlineNamingTheEndpoint) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  RedisOptions o;
  o.reconnect_deadline = 300ms;
  auto c = ConnectTo(server->endpoint(), o);
  ASSERT_TRUE(c);
  ASSERT_TRUE(server->Stop().ok());
  auto r = c->Command({"PING"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(server->endpoint().ToString()), std::string::npos)
      << r.status().message();
  auto fresh = RedisClient::Connect(server->endpoint(), o);
  ASSERT_FALSE(fresh.ok());
  EXPECT_EQ(fresh.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(fresh.status().message().find("cannot connect to redis://127.0.0.1:"),
            std::string::npos);
}

TEST(RedisClient, AuthWithPasswordAndAclUser) {
  RedisServerOptions so;
  so.password = "p@ss w0rd";
  auto server = StartServer(so);
  ASSERT_TRUE(server);
  auto ep = ParseRedisUrl("redis://:p%40ss%20w0rd@127.0.0.1:" + std::to_string(server->port()));
  ASSERT_TRUE(ep.ok());
  auto c = ConnectTo(*ep);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->Command({"PING"})->str, "PONG");
  ASSERT_TRUE(c->Command({"ACL", "SETUSER", "alice", "on", ">alicepw", "~*", "+@all"}).ok());
  RedisEndpoint alice = *ep;
  alice.password = "alice:alicepw";
  auto ca = ConnectTo(alice);
  ASSERT_TRUE(ca);
  EXPECT_EQ(ca->Command({"ACL", "WHOAMI"})->str, "alice");
}

TEST(RedisClient, WrongOrMissingPasswordIsAClearError) {
  RedisServerOptions so;
  so.password = "right";
  auto server = StartServer(so);
  ASSERT_TRUE(server);
  RedisEndpoint ep = server->endpoint();
  ep.password = "wrong-secret";
  auto c = RedisClient::Connect(ep);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(c.status().message().find("authentication to " + ep.ToString() + " failed"),
            std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("WRONGPASS"), std::string::npos);
  EXPECT_EQ(c.status().message().find("wrong-secret"), std::string::npos);
  ep.password.clear();
  auto anon = ConnectTo(ep);
  ASSERT_TRUE(anon);
  auto r = anon->Command({"GET", "k"});
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("NOAUTH"), std::string::npos);
}

TEST(RedisClient, SelectsTheDatabase) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  RedisEndpoint ep3 = server->endpoint();
  ep3.db = 3;
  auto c3 = ConnectTo(ep3);
  auto c0 = ConnectTo(server->endpoint());
  ASSERT_TRUE(c3 && c0);
  ASSERT_TRUE(c3->Command({"SET", "where", "db3"}).ok());
  EXPECT_TRUE(c0->Command({"GET", "where"})->is_nil());
  ASSERT_TRUE(server->Restart().ok());  // the reconnect selects db 3 again
  EXPECT_TRUE(c3->Command({"SET", "again", "db3"}).ok());
  EXPECT_TRUE(c0->Command({"GET", "again"})->is_nil());
}

TEST(RedisClient, TransactionAppliesAllOrReportsWhy) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  auto c = ConnectTo(server->endpoint());
  ASSERT_TRUE(c);
  auto ok = c->Transaction({{"SET", "a", "1"}, {"INCR", "a"}, {"GET", "a"}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->elements.size(), 3u);
  EXPECT_EQ(ok->elements[1].integer, 2);
  EXPECT_EQ(ok->elements[2].str, "2");
  // A command rejected while queueing aborts the whole transaction: nothing applied.
  auto queued = c->Transaction({{"SET", "b", "1"}, {"GET"}});
  ASSERT_FALSE(queued.ok());
  EXPECT_NE(queued.status().message().find("GET"), std::string::npos) << queued.status().message();
  EXPECT_TRUE(c->Command({"GET", "b"})->is_nil());
  // WATCH + a concurrent write makes EXEC return nil: Aborted.
  auto other = ConnectTo(server->endpoint());
  ASSERT_TRUE(c->Command({"WATCH", "w"}).ok());
  ASSERT_TRUE(other->Command({"SET", "w", "changed"}).ok());
  auto aborted = c->Transaction({{"SET", "w", "mine"}});
  EXPECT_EQ(aborted.status().code(), StatusCode::kAborted) << aborted.status().ToString();
  EXPECT_EQ(c->Command({"GET", "w"})->str, "changed");
}

TEST(RedisClient, TransactionRetriesWhenTheServerWasDownBeforeSending) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  auto c = ConnectTo(server->endpoint());
  ASSERT_TRUE(c);
  ASSERT_TRUE(server->Restart().ok());  // the client's socket is now dead
  // Either the write fails (retry is safe) or the outcome is reported unknown; both are
  // explicit. After the first failure the client must work again.
  auto first = c->Transaction({{"SET", "t", "1"}});
  if (!first.ok()) EXPECT_EQ(first.status().code(), StatusCode::kUnavailable);
  auto second = c->Transaction({{"SET", "t", "2"}});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(c->Command({"GET", "t"})->str, "2");
}

TEST(RedisServerFixture, PersistentServerKeepsDataAcrossRestart) {
  RedisServerOptions so;
  so.persist = true;
  auto server = StartServer(so);
  ASSERT_TRUE(server);
  const int port = server->port();
  auto c = ConnectTo(server->endpoint());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->Command({"SET", "kept", "yes"}).ok());
  ASSERT_TRUE(server->Restart().ok());
  EXPECT_EQ(server->port(), port);
  EXPECT_EQ(c->Command({"GET", "kept"})->str, "yes");
  // Without persistence a restart starts empty.
  auto plain = StartServer();
  ASSERT_TRUE(plain);
  auto p = ConnectTo(plain->endpoint());
  ASSERT_TRUE(p->Command({"SET", "gone", "1"}).ok());
  ASSERT_TRUE(plain->Restart().ok());
  EXPECT_TRUE(p->Command({"GET", "gone"})->is_nil());
}

}  // namespace
}  // namespace ccltune::core
