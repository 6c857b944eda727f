// A gtest fixture for tests that run ccltune jobs against a real redis-server and read back
// what they wrote: key counts and a job's progress (rank 0's "done total label" key).
// Header-only: only gtest programs include it.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "tests/support/redis_test.h"
#include "worker/deadline.h"

namespace ccltune::testing {

// A host-backend plan long enough (13 sizes, 20 iterations, 10 rounds) that a fault injected
// after its first problems strikes mid-tune.
inline const char* kLongPlan = R"(
collectives:
- op: allReduce
  dtypes: [fp32]
  sizes: {min: 1KiB, max: 4MiB, factor: 2}
benchmark: {warmupIters: 2, iters: 20, rounds: 10, choiceTimeoutSeconds: 5,
            rendezvousTimeoutSeconds: 20}
)";

class JobTest : public RedisTest {
 protected:
  std::size_t CountKeys(const std::string& pattern) {
    auto r = client_->Command({"KEYS", pattern});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->elements.size() : 0;
  }
  // Blocks until the job's progress key says `problems` are done (or fails the test).
  void WaitForProgress(const std::string& job, int problems, double seconds) {
    const auto deadline = worker::DeadlineIn(seconds);
    while (!worker::Expired(deadline)) {
      auto v = client_->Command({"GET", "ccltune:v1:job:" + job + ":0:progress"});
      if (v.ok() && !v->is_nil() && std::atoi(v->str.c_str()) >= problems) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL() << "job " << job << " made no progress in " << seconds << " s";
  }
};

}  // namespace ccltune::testing
