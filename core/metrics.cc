#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ccltune::core {
namespace {

// std::atomic<double>::fetch_add is C++20 but not lock-free everywhere; a CAS loop is.
void AtomicAdd(std::atomic<double>& target, double by) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + by, std::memory_order_relaxed)) {
  }
}

Status CheckBuckets(const std::vector<double>& buckets) {
  if (buckets.empty()) return InvalidArgument("histogram needs at least one bucket");
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (!std::isfinite(buckets[i]))
      return InvalidArgument("histogram bucket " + std::to_string(i) + " is not finite");
    if (i > 0 && buckets[i] <= buckets[i - 1])
      return InvalidArgument("histogram buckets must increase strictly (bucket " +
                             std::to_string(i) + ")");
  }
  return Status::Ok();
}

Labels WithFamilyLabels(const Labels& const_labels, const std::vector<std::string>& names,
                        const std::vector<std::string>& values) {
  Labels labels = const_labels;
  for (std::size_t i = 0; i < names.size(); ++i) labels.emplace_back(names[i], values[i]);
  return labels;
}

}  // namespace

const char* MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

void Counter::Increment(double by) {
  if (!(by >= 0)) return;  // also rejects NaN
  AtomicAdd(value_, by);
}

void Gauge::Increment(double by) { AtomicAdd(value_, by); }

Histogram::Histogram(std::shared_ptr<const std::vector<double>> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_->size() + 1, 0) {}

void Histogram::Observe(double value) {
  // Bucket i counts value <= bound i (Prometheus `le`); NaN lands in +Inf only.
  auto it = std::lower_bound(bounds_->begin(), bounds_->end(), value);
  std::size_t index =
      std::isnan(value) ? bounds_->size() : static_cast<std::size_t>(it - bounds_->begin());
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[index];
  sum_ += value;
  ++count_;
}

Histogram::Snapshot Histogram::Collect() const {
  Snapshot snap;
  snap.upper_bounds = *bounds_;
  std::lock_guard<std::mutex> lock(mu_);
  std::uint64_t running = 0;
  for (std::uint64_t c : counts_) snap.cumulative.push_back(running += c);
  snap.sum = sum_;
  snap.count = count_;
  return snap;
}

namespace internal {

FamilyBase::FamilyBase(FamilyOptions options, MetricType type)
    : options_(std::move(options)), type_(type) {
  if (type_ == MetricType::kHistogram)
    bucket_bounds_ = std::make_shared<const std::vector<double>>(options_.buckets);
}

void* FamilyBase::FindOrCreate(const std::vector<std::string>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  if (values.size() != options_.label_names.size()) {
    // A programming error, but metrics must never take the worker down: count and detach.
    dropped_.fetch_add(1, std::memory_order_relaxed);
    detached_.push_back(NewChild());
    return detached_.back().get();
  }
  auto it = children_.find(values);
  if (it != children_.end()) {
    if (!it->second.exported && exported_count_ < options_.max_label_sets) {
      it->second.exported = true;
      ++exported_count_;
    }
    return it->second.metric.get();
  }
  if (exported_count_ >= options_.max_label_sets) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    // One detached child per drop would grow without bound; one shared sink is enough since
    // its values are never read.
    if (detached_.empty()) detached_.push_back(NewChild());
    return detached_.front().get();
  }
  Child child{NewChild(), true};
  ++exported_count_;
  return children_.emplace(values, std::move(child)).first->second.metric.get();
}

void FamilyBase::RemoveChild(const std::vector<std::string>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = children_.find(values);
  if (it == children_.end() || !it->second.exported) return;
  it->second.exported = false;
  --exported_count_;
}

FamilySnapshot FamilyBase::Collect(const Labels& const_labels) const {
  FamilySnapshot snap{options_.name, options_.help, type_, {}};
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, child] : children_) {
    if (!child.exported) continue;
    AppendSamples(child.metric.get(), WithFamilyLabels(const_labels, options_.label_names, values),
                  snap.samples);
  }
  return snap;
}

}  // namespace internal

template <class T>
std::shared_ptr<void> Family<T>::NewChild() const {
  if constexpr (std::is_same_v<T, Histogram>) {
    return std::make_shared<Histogram>(bucket_bounds_);
  } else {
    return std::make_shared<T>();
  }
}

template <class T>
void Family<T>::AppendSamples(const void* child, const Labels& labels,
                              std::vector<Sample>& out) const {
  const T& metric = *static_cast<const T*>(child);
  if constexpr (std::is_same_v<T, Histogram>) {
    Histogram::Snapshot snap = metric.Collect();
    for (std::size_t i = 0; i < snap.cumulative.size(); ++i) {
      Labels with_le = labels;
      double bound = i < snap.upper_bounds.size() ? snap.upper_bounds[i]
                                                  : std::numeric_limits<double>::infinity();
      with_le.emplace_back("le", FormatValue(bound));
      out.push_back({"_bucket", std::move(with_le), static_cast<double>(snap.cumulative[i])});
    }
    out.push_back({"_sum", labels, snap.sum});
    out.push_back({"_count", labels, static_cast<double>(snap.count)});
  } else {
    out.push_back({"", labels, metric.Value()});
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Status Registry::CheckNewFamily(const FamilyOptions& options, MetricType type) const {
  if (!IsValidMetricName(options.name))
    return InvalidArgument("metric name '" + options.name + "' is not [a-zA-Z_:][a-zA-Z0-9_:]*");
  if (type == MetricType::kCounter &&
      (options.name.size() < 6 || options.name.compare(options.name.size() - 6, 6, "_total")))
    return InvalidArgument("counter '" + options.name + "' must end in _total");
  if (families_.count(options.name) || options.name == kDroppedLabelSetsFamily)
    return InvalidArgument("metric '" + options.name + "' is already registered");
  for (const auto& label : options.label_names) {
    if (!IsValidLabelName(label))
      return InvalidArgument(options.name + ": label name '" + label + "' is invalid");
    if (type == MetricType::kHistogram && label == "le")
      return InvalidArgument(options.name + ": 'le' is reserved for histogram buckets");
    if (const_labels_.count(label))
      return FailedPrecondition(options.name + ": label '" + label + "' is a const label");
    if (std::count(options.label_names.begin(), options.label_names.end(), label) > 1)
      return InvalidArgument(options.name + ": label '" + label + "' appears twice");
  }
  if (type == MetricType::kHistogram)
    return CheckBuckets(options.buckets).WithContext(options.name);
  return Status::Ok();
}

template <class T>
Result<Family<T>*> Registry::Add(FamilyOptions options, MetricType type) {
  std::lock_guard<std::mutex> lock(mu_);
  CCLTUNE_RETURN_IF_ERROR(CheckNewFamily(options, type));
  std::string name = options.name;
  auto family = std::make_unique<Family<T>>(std::move(options), type);
  Family<T>* raw = family.get();
  families_.emplace(std::move(name), std::move(family));
  return raw;
}

Result<Family<Counter>*> Registry::AddCounter(FamilyOptions options) {
  return Add<Counter>(std::move(options), MetricType::kCounter);
}
Result<Family<Gauge>*> Registry::AddGauge(FamilyOptions options) {
  return Add<Gauge>(std::move(options), MetricType::kGauge);
}
Result<Family<Histogram>*> Registry::AddHistogram(FamilyOptions options) {
  return Add<Histogram>(std::move(options), MetricType::kHistogram);
}

Status Registry::SetConstLabel(const std::string& name, const std::string& value) {
  // `le` belongs to buckets and `family` to the dropped-label-sets counter.
  if (!IsValidLabelName(name) || name == "le" || name == "family")
    return InvalidArgument("const label name '" + name + "' is invalid");
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [family_name, family] : families_) {
    const auto& names = family->options().label_names;
    if (std::find(names.begin(), names.end(), name) != names.end())
      return FailedPrecondition("const label '" + name + "' is a label of " + family_name);
  }
  const_labels_[name] = value;
  return Status::Ok();
}

std::vector<FamilySnapshot> Registry::Collect() const {
  std::lock_guard<std::mutex> lock(mu_);
  Labels const_labels;
  for (const auto& [name, value] : const_labels_)
    if (!value.empty()) const_labels.emplace_back(name, value);
  std::vector<FamilySnapshot> out;
  FamilySnapshot dropped{kDroppedLabelSetsFamily,
                         "Label sets not exported because a family reached its cap.",
                         MetricType::kCounter,
                         {}};
  for (const auto& [name, family] : families_) {
    out.push_back(family->Collect(const_labels));
    if (family->options().label_names.empty()) continue;
    Labels labels = const_labels;
    labels.emplace_back("family", name);
    dropped.samples.push_back({"", std::move(labels), static_cast<double>(family->dropped())});
  }
  // Keep the families sorted by name: the dropped counter sorts among them.
  auto pos =
      std::lower_bound(out.begin(), out.end(), dropped.name,
                       [](const FamilySnapshot& f, const std::string& n) { return f.name < n; });
  out.insert(pos, std::move(dropped));
  return out;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  double bound = start;
  for (int i = 0; i < count; ++i, bound *= factor) bounds.push_back(bound);
  return bounds;
}

}  // namespace ccltune::core
