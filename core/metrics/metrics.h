// Metrics model: counter, gauge and histogram families on prometheus-cpp's Registry (its
// core/ only: no HTTP here; the worker's Exposer and Gateway and the controller's /metrics
// observe a Registry through collectable() or Text()). Define every family once, at startup,
// then update children from any thread.
//
// This wrapper adds what prometheus-cpp 1.0.1 lacks and docs/design.md §7 relies on:
//  - Cardinality: each family holds at most `max_label_sets` label sets. Past the cap (or with
//    the wrong number of label values), WithLabels() returns a detached child that is updated
//    but never exported, and the drop is counted in
//    `ccltune_metrics_label_sets_dropped_total{family}` (one series per labelled family).
//  - Const labels that may be set after the families exist (a worker learns its fingerprint
//    only after rendezvous); prometheus-cpp fixes a family's const labels when it is built, so
//    they are stamped on every sample at collection.
//  - Stable output: families sorted by name, children by label values, labels in declared
//    order after the const labels (prometheus-cpp keeps children in a hash map).
//  - HELP text escaped (prometheus-cpp writes it verbatim, up to 1.3.0 at least).
//
// Thread-safety: everything here is thread-safe (prometheus-cpp's children are atomics, a
// histogram locks so that one collection sees buckets, _sum and _count of one instant).
// Ownership: the Registry owns its families. Pointers returned by AddCounter/AddGauge/
// AddHistogram live as long as the Registry; a child reference from WithLabels() lives until
// Remove() of its label values, so callers look children up per use and hold none across it.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"

namespace ccltune::core {

// Prometheus text exposition format 0.0.4 content type (what /metrics answers with).
inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";
// Default per-family cap on distinct label sets (see the header comment).
inline constexpr std::size_t kDefaultMaxLabelSets = 4096;
inline constexpr char kDroppedLabelSetsFamily[] = "ccltune_metrics_label_sets_dropped_total";

using Counter = prometheus::Counter;  // negative increments are ignored
using Gauge = prometheus::Gauge;
using Histogram = prometheus::Histogram;

struct FamilyOptions {
  std::string name;                      // e.g. "ccltune_barrier_seconds"
  std::string help;                      // one line; escaped on output
  std::vector<std::string> label_names;  // fixed for the family's lifetime
  std::size_t max_label_sets = kDefaultMaxLabelSets;
  std::vector<double> buckets;  // histograms only: finite upper bounds, increasing
};

// One family: prometheus-cpp's, behind the label-set cap.
template <class T>
class Family {
 public:
  // `dropped` counts this family's drops; exported only for labelled families.
  Family(FamilyOptions options, prometheus::Family<T>& family, Counter& dropped);
  // The child for these label values (one per label name, in order), created on first use.
  // Over the cap or with the wrong number of values: a detached child (see header comment).
  T& WithLabels(const std::vector<std::string>& values);
  // Stops exporting a child (e.g. a winner that was replaced) and frees its slot. References
  // to it become invalid.
  void Remove(const std::vector<std::string>& values);

 private:
  T& AddChild(const std::vector<std::string>& values);
  T& Detached();

  const FamilyOptions options_;
  prometheus::Family<T>& family_;  // owned by the prometheus::Registry
  Counter& dropped_;
  std::mutex mu_;
  // Exported children by label values: prometheus-cpp has no lookup without a new child.
  std::map<std::vector<std::string>, T*> children_;
  std::unique_ptr<T> detached_;  // one shared sink: its values are never read
};

// Defined (and instantiated) in metrics.cc for exactly these three kinds.
extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

namespace internal {
struct RegistryState;  // shared with what observes the registry
}

class Registry {
 public:
  Registry();
  ~Registry();
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

  // Every family with at least one child, sorted as the header comment says.
  std::vector<prometheus::MetricFamily> Collect() const;
  // Collect() in the text format 0.0.4 (prometheus-cpp's TextSerializer).
  std::string Text() const;
  // What an Exposer or a Gateway registers (they hold it weakly): Collect() of this registry.
  // It may outlive the Registry; a collection then still works on the last state.
  std::shared_ptr<prometheus::Collectable> collectable() const;

 private:
  std::shared_ptr<internal::RegistryState> state_;
};

// Bucket layouts. Exponential: start, start*factor, ... (count bounds).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

}  // namespace ccltune::core
