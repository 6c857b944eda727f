// Metrics model: a small registry of counter, gauge and histogram families, shaped like
// prometheus-cpp's core/ (no HTTP here: servers and pushers only observe a Registry through
// Collect() and SerializeText()). Define every family once, at startup, then update children
// from any thread.
//
// Thread-safety: everything in this header is thread-safe. Counter and Gauge children are
// lock-free atomics; a Histogram child takes its own small mutex so that one Collect() sees
// buckets, _sum and _count of the same instant (promtool rejects +Inf bucket != _count).
//
// Ownership: the Registry owns its families, a family owns its children. Pointers and
// references returned by AddCounter/AddGauge/AddHistogram/WithLabels stay valid for the
// Registry's lifetime (children are never freed, only hidden by Remove()).
//
// Cardinality: each family holds at most `max_label_sets` distinct label sets. Past the cap,
// WithLabels() returns a detached child that is updated but never exported, and the drop is
// counted in `ccltune_metrics_label_sets_dropped_total{family}`, which every Registry exports
// (one series per labelled family, so its own cardinality is bounded by the family count).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace ccltune::core {

// Prometheus text exposition format 0.0.4 content type (what /metrics answers with and what a
// Pushgateway PUT declares).
inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";
// Default per-family cap on distinct label sets (see the header comment).
inline constexpr std::size_t kDefaultMaxLabelSets = 4096;
inline constexpr char kDroppedLabelSetsFamily[] = "ccltune_metrics_label_sets_dropped_total";

enum class MetricType { kCounter, kGauge, kHistogram };
const char* MetricTypeName(MetricType type);  // "counter", "gauge", "histogram"

// Monotonic count. Negative or NaN increments are ignored: a counter that goes down is read
// by rate() as a process restart.
class Counter {
 public:
  void Increment(double by = 1.0);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Increment(double by = 1.0);
  void Decrement(double by = 1.0) { Increment(-by); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  // `upper_bounds`: finite, strictly increasing (checked by Registry::AddHistogram); the +Inf
  // bucket is implicit.
  explicit Histogram(std::shared_ptr<const std::vector<double>> upper_bounds);
  void Observe(double value);

  struct Snapshot {
    std::vector<double> upper_bounds;       // without +Inf
    std::vector<std::uint64_t> cumulative;  // one per bound, then +Inf (== count)
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot Collect() const;

 private:
  std::shared_ptr<const std::vector<double>> bounds_;
  mutable std::mutex mu_;
  std::vector<std::uint64_t> counts_;  // per bucket, non-cumulative, last is +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

// Label name → value, in exposition order.
using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  std::string suffix;  // "", "_bucket", "_sum", "_count"
  Labels labels;       // const labels, family labels, then `le` for buckets
  double value = 0;
};

// What a Registry looks like at one instant; the input of SerializeText().
struct FamilySnapshot {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<Sample> samples;
};

struct FamilyOptions {
  std::string name;                      // e.g. "ccltune_barrier_seconds"
  std::string help;                      // one line; escaped on output
  std::vector<std::string> label_names;  // fixed for the family's lifetime
  std::size_t max_label_sets = kDefaultMaxLabelSets;
  std::vector<double> buckets;  // histograms only: finite upper bounds, increasing
};

namespace internal {
// The family machinery shared by the three metric kinds; use Family<T> below.
class FamilyBase {
 public:
  FamilyBase(FamilyOptions options, MetricType type);
  virtual ~FamilyBase() = default;
  const FamilyOptions& options() const { return options_; }
  MetricType type() const { return type_; }
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  FamilySnapshot Collect(const Labels& const_labels) const;

 protected:
  void* FindOrCreate(const std::vector<std::string>& values);
  void RemoveChild(const std::vector<std::string>& values);
  virtual std::shared_ptr<void> NewChild() const = 0;
  virtual void AppendSamples(const void* child, const Labels& labels,
                             std::vector<Sample>& out) const = 0;
  // Histogram families share one bounds vector among their children.
  std::shared_ptr<const std::vector<double>> bucket_bounds_;

 private:
  struct Child {
    std::shared_ptr<void> metric;
    bool exported = true;  // false after Remove(); kept so outstanding references stay valid
  };
  FamilyOptions options_;
  MetricType type_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, Child> children_;  // ordered: stable output
  std::size_t exported_count_ = 0;
  std::vector<std::shared_ptr<void>> detached_;  // over-cap or bad-arity children
  std::atomic<std::uint64_t> dropped_{0};
};
}  // namespace internal

template <class T>
class Family final : public internal::FamilyBase {
 public:
  Family(FamilyOptions options, MetricType type) : FamilyBase(std::move(options), type) {}
  // The child for these label values (one per label name, in order), created on first use.
  // Over the cap or with the wrong number of values: a detached child (see header comment).
  T& WithLabels(const std::vector<std::string>& values) {
    return *static_cast<T*>(FindOrCreate(values));
  }
  // Stops exporting a child (e.g. a winner that was replaced). Its reference stays valid.
  void Remove(const std::vector<std::string>& values) { RemoveChild(values); }

 private:
  std::shared_ptr<void> NewChild() const override;
  void AppendSamples(const void* child, const Labels& labels,
                     std::vector<Sample>& out) const override;
};

// Defined (and instantiated) in metrics.cc for exactly these three kinds.
extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Errors: InvalidArgument for a bad metric/label name, a counter not ending in `_total`,
  // bad buckets, or a name already registered; FailedPrecondition when a label name
  // collides with a const label.
  Result<Family<Counter>*> AddCounter(FamilyOptions options);
  Result<Family<Gauge>*> AddGauge(FamilyOptions options);
  Result<Family<Histogram>*> AddHistogram(FamilyOptions options);

  // A label added to every sample of every family, e.g. ccltune_job, rank, fingerprint. May
  // be set (or changed) at any time; an empty value omits the label, which Prometheus treats
  // the same as absent. Errors: bad name, or a name some family already uses.
  Status SetConstLabel(const std::string& name, const std::string& value);

  // Every family (sorted by name) plus the dropped-label-sets counter.
  std::vector<FamilySnapshot> Collect() const;

 private:
  Status CheckNewFamily(const FamilyOptions& options, MetricType type) const;
  template <class T>
  Result<Family<T>*> Add(FamilyOptions options, MetricType type);

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<internal::FamilyBase>> families_;
  std::map<std::string, std::string> const_labels_;
};

// Prometheus text format 0.0.4: `# HELP`, `# TYPE`, then samples, families in the given order.
std::string SerializeText(const std::vector<FamilySnapshot>& families);
// Shorthand for SerializeText(registry.Collect()).
std::string SerializeText(const Registry& registry);

// Exposition helpers, public for tests and for other serializers.
std::string EscapeHelp(const std::string& help);         // `\` and newline
std::string EscapeLabelValue(const std::string& value);  // `\`, `"` and newline
std::string FormatValue(double value);                   // shortest round-trip, +Inf, NaN
bool IsValidMetricName(const std::string& name);
bool IsValidLabelName(const std::string& name);

// Bucket layouts. Exponential: start, start*factor, ... (count bounds).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

}  // namespace ccltune::core
