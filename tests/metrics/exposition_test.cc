// The registry (core/metrics/metrics.h over prometheus-cpp) and the text format 0.0.4 it
// serializes, checked on exact output: escaping, histogram layout, sorted stable order, const
// labels, the cardinality cap and its drop counter, name rules, and concurrent updates while
// collecting.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "core/metrics/metrics.h"

namespace ccltune::core {
namespace {

TEST(MetricsExposition, EscapesHelpAndLabelValues) {
  Registry r;
  auto g = r.AddGauge({"t_gauge", "line1\nback\\slash \"quoted\"", {"l"}, 10, {}});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  (*g)->WithLabels({"a\"b\\c\nd"}).Set(2.5);
  std::string text = r.Text();
  // HELP escapes backslash and newline but not quotes; label values escape all three.
  EXPECT_NE(text.find("# HELP t_gauge line1\\nback\\\\slash \"quoted\"\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("t_gauge{l=\"a\\\"b\\\\c\\nd\"} 2.5\n"), std::string::npos) << text;
}

TEST(MetricsExposition, HistogramHasCumulativeBucketsInfSumCount) {
  Registry r;
  auto h = r.AddHistogram({"t_seconds", "h", {}, 10, {0.001, 0.01, 0.1}});
  ASSERT_TRUE(h.ok());
  auto& child = (*h)->WithLabels({});
  for (double v : {0.0005, 0.001, 0.05, 0.05, 7.0}) child.Observe(v);
  std::string text = r.Text();
  // prometheus-cpp writes _count and _sum before the buckets; each line as before.
  for (const char* expected :
       {"# HELP t_seconds h\n# TYPE t_seconds histogram\n",
        "\nt_seconds_bucket{le=\"0.001\"} 2\n",  // 0.001 itself counts: le is inclusive
        "\nt_seconds_bucket{le=\"0.01\"} 2\n", "\nt_seconds_bucket{le=\"0.1\"} 4\n",
        "\nt_seconds_bucket{le=\"+Inf\"} 5\n", "\nt_seconds_sum 7.1015\n", "\nt_seconds_count 5\n"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
}

TEST(MetricsExposition, FamiliesAndChildrenAreSortedAndStable) {
  Registry r;
  auto b = r.AddGauge({"b_gauge", "b", {"k"}, 10, {}});
  auto a = r.AddCounter({"a_total", "a", {}, 10, {}});
  ASSERT_TRUE(a.ok() && b.ok());
  (*b)->WithLabels({"z"}).Set(1);
  (*b)->WithLabels({"m"}).Set(2);
  (*a)->WithLabels({}).Increment(3);
  std::string first = r.Text();
  EXPECT_LT(first.find("a_total 3"), first.find("b_gauge{k=\"m\"} 2"));
  EXPECT_LT(first.find("b_gauge{k=\"m\"}"), first.find("b_gauge{k=\"z\"}"));
  EXPECT_EQ(first, r.Text());
}

TEST(MetricsExposition, ConstLabelsComeFirstAndEmptyOnesAreOmitted) {
  Registry r;
  ASSERT_TRUE(r.SetConstLabel("ccltune_job", "j1").ok());
  ASSERT_TRUE(r.SetConstLabel("fingerprint", "").ok());
  auto g = r.AddGauge({"t_gauge", "g", {"op"}, 10, {}});
  ASSERT_TRUE(g.ok());
  (*g)->WithLabels({"allReduce"}).Set(1);
  EXPECT_NE(r.Text().find("t_gauge{ccltune_job=\"j1\",op=\"allReduce\"} 1"), std::string::npos);
  ASSERT_TRUE(r.SetConstLabel("fingerprint", "abc").ok());
  EXPECT_NE(r.Text().find("t_gauge{ccltune_job=\"j1\",fingerprint=\"abc\",op="), std::string::npos);
  // A const label may not shadow a family label, in either order.
  EXPECT_EQ(r.SetConstLabel("op", "x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.AddGauge({"u_gauge", "g", {"ccltune_job"}, 10, {}}).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(MetricsExposition, CardinalityCapDropsAndCounts) {
  Registry r;
  auto g = r.AddGauge({"t_gauge", "g", {"k"}, 2, {}});
  ASSERT_TRUE(g.ok());
  (*g)->WithLabels({"a"}).Set(1);
  (*g)->WithLabels({"b"}).Set(2);
  (*g)->WithLabels({"c"}).Set(3);       // over the cap: updated but not exported
  (*g)->WithLabels({"a", "x"}).Set(4);  // wrong arity: also a drop, never a crash
  (*g)->WithLabels({"a"}).Set(5);       // existing children keep working
  std::string text = r.Text();
  EXPECT_EQ(text.find("k=\"c\""), std::string::npos) << text;
  EXPECT_NE(text.find("t_gauge{k=\"a\"} 5"), std::string::npos) << text;
  EXPECT_NE(text.find("ccltune_metrics_label_sets_dropped_total{family=\"t_gauge\"} 2"),
            std::string::npos)
      << text;
  // Remove frees a slot for a new label set.
  (*g)->Remove({"b"});
  (*g)->WithLabels({"d"}).Set(6);
  text = r.Text();
  EXPECT_EQ(text.find("k=\"b\""), std::string::npos) << text;
  EXPECT_NE(text.find("t_gauge{k=\"d\"} 6"), std::string::npos) << text;
}

TEST(MetricsExposition, RejectsBadNamesBucketsAndDuplicates) {
  Registry r;
  EXPECT_FALSE(r.AddGauge({"9bad", "h", {}, 1, {}}).ok());
  EXPECT_FALSE(r.AddGauge({"ok_gauge", "h", {"__reserved"}, 1, {}}).ok());
  EXPECT_FALSE(r.AddGauge({"ok_gauge", "h", {"a", "a"}, 1, {}}).ok());
  EXPECT_FALSE(r.AddCounter({"requests", "h", {}, 1, {}}).ok());  // counters end in _total
  EXPECT_FALSE(r.AddHistogram({"h_seconds", "h", {"le"}, 1, {1.0}}).ok());
  EXPECT_FALSE(r.AddHistogram({"h_seconds", "h", {}, 1, {1.0, 1.0}}).ok());
  EXPECT_FALSE(r.AddHistogram({"h_seconds", "h", {}, 1, {}}).ok());
  EXPECT_FALSE(
      r.AddHistogram({"h_seconds", "h", {}, 1, {1.0, std::numeric_limits<double>::infinity()}})
          .ok());
  ASSERT_TRUE(r.AddGauge({"ok_gauge", "h", {}, 1, {}}).ok());
  EXPECT_FALSE(r.AddCounter({"ok_gauge", "h", {}, 1, {}}).ok());
  EXPECT_FALSE(r.AddCounter({kDroppedLabelSetsFamily, "h", {}, 1, {}}).ok());
}

// The value as the serializer writes it (prometheus-cpp's, through a gauge).
std::string FormatValue(double value) {
  Registry r;
  auto g = r.AddGauge({"v_gauge", "v", {}, 1, {}});
  (*g)->WithLabels({}).Set(value);
  std::string text = r.Text();
  std::size_t at = text.find("\nv_gauge ") + 9;
  return text.substr(at, text.find('\n', at) - at);
}

TEST(MetricsExposition, FormatsSpecialValuesAndShortestDecimals) {
  EXPECT_EQ(FormatValue(0.001), "0.001");
  EXPECT_EQ(FormatValue(1e-06), "1e-06");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "Nan");  // prometheus-cpp's spelling; Prometheus reads it
}

TEST(MetricsExposition, CounterIgnoresNegativeIncrements) {
  Counter c;
  c.Increment(2);
  c.Increment(-1);
  EXPECT_EQ(c.Value(), 2);
}

TEST(MetricsExposition, ConcurrentUpdatesWhileCollectingStayConsistent) {
  Registry r;
  auto h = r.AddHistogram({"c_seconds", "h", {"t"}, 100, {0.5}});
  auto c = r.AddCounter({"c_total", "c", {"t"}, 100, {}});
  ASSERT_TRUE(h.ok() && c.ok());
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop) {
      for (const auto& family : r.Collect())
        if (family.name == "c_seconds")  // +Inf bucket must equal _count in every snapshot
          for (const auto& child : family.metric)
            ASSERT_EQ(child.histogram.bucket.back().cumulative_count, child.histogram.sample_count);
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        (*h)->WithLabels({std::to_string(t % 2)}).Observe(i % 2 ? 0.1 : 1.0);
        (*c)->WithLabels({std::to_string(t % 2)}).Increment();
      }
    });
  for (auto& w : writers) w.join();
  stop = true;
  reader.join();
  EXPECT_EQ((*c)->WithLabels({"0"}).Value() + (*c)->WithLabels({"1"}).Value(), 80000);
}

}  // namespace
}  // namespace ccltune::core
