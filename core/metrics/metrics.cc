#include "core/metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "prometheus/check_names.h"
#include "prometheus/detail/builder.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace ccltune::core {
namespace internal {

using Label = prometheus::ClientMetric::Label;

// The registry's state. Exposers and gateways hold it (weakly) and collect it from their own
// threads, so it is shared rather than owned by Registry alone.
struct RegistryState final : prometheus::Collectable {
  std::vector<prometheus::MetricFamily> Collect() const override;

  mutable std::mutex mu;  // guards the members below; prometheus-cpp guards its own
  prometheus::Registry registry{prometheus::Registry::InsertBehavior::Throw};
  prometheus::Family<Counter>& dropped = prometheus::detail::Builder<Counter>()
                                             .Name(kDroppedLabelSetsFamily)
                                             .Help(
                                                 "Label sets not exported because a family "
                                                 "reached its cap.")
                                             .Register(registry);
  Counter unlabelled_drops;  // drops of unlabelled families: not exported
  std::map<std::string, std::vector<std::string>> label_names{
      {kDroppedLabelSetsFamily, {"family"}}};   // by family name, in declared order
  std::vector<std::shared_ptr<void>> families;  // our Family<T> wrappers
  std::map<std::string, std::string> const_labels;
};

namespace {

// The non-empty const labels (sorted by name), then `own` in the declared order.
std::vector<Label> Ordered(const std::vector<Label>& consts, const std::vector<std::string>& names,
                           const std::vector<Label>& own) {
  std::vector<Label> out = consts;
  for (const std::string& name : names)
    for (const Label& label : own)
      if (label.name == name) out.push_back(label);
  return out;
}

bool ByLabelValues(const prometheus::ClientMetric& a, const prometheus::ClientMetric& b) {
  return std::lexicographical_compare(
      a.label.begin(), a.label.end(), b.label.begin(), b.label.end(),
      [](const Label& x, const Label& y) { return x.value < y.value; });
}

}  // namespace

std::vector<prometheus::MetricFamily> RegistryState::Collect() const {
  std::lock_guard<std::mutex> lock(mu);
  std::vector<Label> consts;
  for (const auto& [name, value] : const_labels)
    if (!value.empty()) consts.push_back({name, value});
  std::vector<prometheus::MetricFamily> families = registry.Collect();
  for (prometheus::MetricFamily& family : families) {
    const std::vector<std::string>& names = label_names.at(family.name);
    for (prometheus::ClientMetric& metric : family.metric)
      metric.label = Ordered(consts, names, metric.label);
    std::sort(family.metric.begin(), family.metric.end(), ByLabelValues);
  }
  std::sort(families.begin(), families.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return families;
}

}  // namespace internal

namespace {

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

// The rules prometheus-cpp does not enforce (or enforces by throwing, later).
template <class T>
Status CheckNewFamily(const internal::RegistryState& s, const FamilyOptions& options) {
  if (!prometheus::CheckMetricName(options.name))
    return InvalidArgument("metric name '" + options.name + "' is not [a-zA-Z_:][a-zA-Z0-9_:]*");
  if (std::is_same_v<T, Counter> &&
      (options.name.size() < 6 || options.name.compare(options.name.size() - 6, 6, "_total")))
    return InvalidArgument("counter '" + options.name + "' must end in _total");
  if (s.label_names.count(options.name))
    return InvalidArgument("metric '" + options.name + "' is already registered");
  for (const auto& label : options.label_names) {
    if (!prometheus::CheckLabelName(label))
      return InvalidArgument(options.name + ": label name '" + label + "' is invalid");
    if (std::is_same_v<T, Histogram> && label == "le")
      return InvalidArgument(options.name + ": 'le' is reserved for histogram buckets");
    if (s.const_labels.count(label))
      return FailedPrecondition(options.name + ": label '" + label + "' is a const label");
    if (std::count(options.label_names.begin(), options.label_names.end(), label) > 1)
      return InvalidArgument(options.name + ": label '" + label + "' appears twice");
  }
  if (std::is_same_v<T, Histogram>) return CheckBuckets(options.buckets).WithContext(options.name);
  return Status::Ok();
}

// prometheus-cpp writes HELP verbatim; the text format wants `\` and newline escaped.
std::string EscapeHelp(const std::string& help) {
  std::string out;
  for (char c : help) out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
  return out;
}

template <class T>
Result<Family<T>*> Add(internal::RegistryState& s, FamilyOptions options) {
  std::lock_guard<std::mutex> lock(s.mu);
  CCLTUNE_RETURN_IF_ERROR(CheckNewFamily<T>(s, options));
  prometheus::Family<T>& family = prometheus::detail::Builder<T>()
                                      .Name(options.name)
                                      .Help(EscapeHelp(options.help))
                                      .Register(s.registry);
  Counter& dropped =
      options.label_names.empty() ? s.unlabelled_drops : s.dropped.Add({{"family", options.name}});
  s.label_names[options.name] = options.label_names;
  auto wrapper = std::make_shared<Family<T>>(std::move(options), family, dropped);
  s.families.push_back(wrapper);
  return wrapper.get();
}

}  // namespace

Registry::Registry() : state_(std::make_shared<internal::RegistryState>()) {}
Registry::~Registry() = default;

Result<Family<Counter>*> Registry::AddCounter(FamilyOptions options) {
  return Add<Counter>(*state_, std::move(options));
}
Result<Family<Gauge>*> Registry::AddGauge(FamilyOptions options) {
  return Add<Gauge>(*state_, std::move(options));
}
Result<Family<Histogram>*> Registry::AddHistogram(FamilyOptions options) {
  return Add<Histogram>(*state_, std::move(options));
}

Status Registry::SetConstLabel(const std::string& name, const std::string& value) {
  // `le` belongs to buckets and `family` to the dropped-label-sets counter.
  if (!prometheus::CheckLabelName(name) || name == "le" || name == "family")
    return InvalidArgument("const label name '" + name + "' is invalid");
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& [family, names] : state_->label_names)
    if (std::find(names.begin(), names.end(), name) != names.end())
      return FailedPrecondition("const label '" + name + "' is a label of " + family);
  state_->const_labels[name] = value;
  return Status::Ok();
}

std::vector<prometheus::MetricFamily> Registry::Collect() const { return state_->Collect(); }

std::string Registry::Text() const { return prometheus::TextSerializer().Serialize(Collect()); }

std::shared_ptr<prometheus::Collectable> Registry::collectable() const { return state_; }

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  double bound = start;
  for (int i = 0; i < count; ++i, bound *= factor) bounds.push_back(bound);
  return bounds;
}

}  // namespace ccltune::core
